// Package devserver is `harness dev`: one page, served by the binary on
// loopback, for the author of one document. It shows the document's review
// sheet and lint's problems (FILE:LINE:COL, each opening the file at that
// place), a form per tool generated from its input schema, runs against the
// host the command built (the simulated campus, a secrets file or the
// keystore) with the result JSON and the step trace, a jq and CSS scratch
// pane compiled by the engine's own step compiler, widget previews rendered
// from their generative-UI JSON with their data source's data, "save as
// test case" from a run, and a reload when a file of the document changes
// (server-sent events).
//
// The server is meant for a loopback listener and guards itself as the MCP
// HTTP transport does: a request whose Host or Origin is not the server's
// own loopback origin is refused with 403 (DNS rebinding); every path
// starts with a random token, compared in constant time (404 otherwise);
// request bodies are bounded; runs are bounded in number at once; results,
// errors and traces leave through the host's redactor, so no credential is
// ever shown.
package devserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
)

//go:embed static
var static embed.FS

// Bounds of the server.
const (
	DefaultMaxBody     = 2 << 20 // one request body
	DefaultMaxRuns     = 2       // runs (tools, widget data) at once
	DefaultRunTimeout  = 60 * time.Second
	DefaultWatchEvery  = 300 * time.Millisecond
	MaxSubscribers     = 16 // event streams open at once
	MaxKeptRuns        = 16 // finished runs kept (their traces feed the scratch pane)
	MaxKeptRecordings  = 4  // of those, the newest whose exchanges are kept for "save as test case"
	MaxRecordingBytes  = 16 << 20
	MaxTraceOutput     = 64 << 10
	maxScratchDuration = 2 * time.Second
)

// Config is what the server serves.
type Config struct {
	// Path is the document: a folder or a single PLUGIN.md.
	Path string
	// Load reads and checks the document as `harness lint` does. The
	// plugin may be nil when the files cannot be read as a document.
	Load func() (*manifest.Plugin, diag.List, error)
	// Host runs the tools.
	Host *host.Host
	// Mode says in words what runs reach ("the simulated campus", ...).
	Mode string
	// Trust is the document's trust for its runs (default community).
	Trust registry.Trust
	// Scrub are personal values a saved test case must not hold (the
	// simulated campus's student id and name): each is replaced by a
	// placeholder of the same shape.
	Scrub []string
	// MaxBody, MaxRuns, RunTimeout and WatchEvery bound the server
	// (the defaults when 0).
	MaxBody    int64
	MaxRuns    int
	RunTimeout time.Duration
	WatchEvery time.Duration
	// Token is the URL's secret (random when "").
	Token string
}

// Server is the author's page for one document. It is safe for concurrent use.
type Server struct {
	cfg   Config
	token string
	runs  chan struct{} // the run slots

	mu    sync.Mutex
	snap  *snapshot
	kept  []*runRecord // the last runs, newest last
	seq   int
	subs  map[chan string]struct{}
	print string // the document's fingerprint when snap was taken
}

// New builds a server and reads the document once.
func New(cfg Config) (*Server, error) {
	if cfg.Load == nil || cfg.Host == nil {
		return nil, errors.New("devserver: Config needs Load and Host")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	if cfg.RunTimeout <= 0 {
		cfg.RunTimeout = DefaultRunTimeout
	}
	if cfg.WatchEvery <= 0 {
		cfg.WatchEvery = DefaultWatchEvery
	}
	if cfg.Trust == "" {
		cfg.Trust = registry.Community
	}
	tok := cfg.Token
	if tok == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		tok = hex.EncodeToString(b)
	}
	s := &Server{cfg: cfg, token: tok, runs: make(chan struct{}, cfg.MaxRuns), subs: map[chan string]struct{}{}}
	s.print = fingerprint(cfg.Path)
	s.snap = s.load()
	return s, nil
}

// Token is the secret the page's URL starts with.
func (s *Server) Token() string { return s.token }

// URL is the page's address on a listener at addr ("127.0.0.1:PORT").
func (s *Server) URL(addr string) string { return "http://" + addr + "/" + s.token + "/" }

// Handler serves the page and its API under /TOKEN/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /app.js", s.serveStatic("static/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /app.css", s.serveStatic("static/app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /api/state", s.serveState)
	mux.HandleFunc("GET /api/file", s.serveFile)
	mux.HandleFunc("GET /api/events", s.serveEvents)
	mux.HandleFunc("POST /api/run", s.serveRun)
	mux.HandleFunc("POST /api/scratch", s.serveScratch)
	mux.HandleFunc("POST /api/widget", s.serveWidget)
	mux.HandleFunc("POST /api/tests", s.serveTests)
	mux.HandleFunc("POST /api/save", s.serveSave)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer") // the token is in the URL
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		if err := registry.CheckLocalOrigin(req); err != nil {
			http.Error(w, "Forbidden: "+err.Error(), http.StatusForbidden)
			return
		}
		rest, ok := s.cutToken(req.URL.Path)
		if !ok {
			if req.Method == http.MethodGet && subtle.ConstantTimeCompare([]byte(strings.TrimPrefix(req.URL.Path, "/")), []byte(s.token)) == 1 {
				http.Redirect(w, req, "/"+s.token+"/", http.StatusPermanentRedirect)
				return
			}
			http.NotFound(w, req)
			return
		}
		if req.Method == http.MethodPost {
			if ct := req.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				http.Error(w, "Unsupported Media Type: the API takes application/json", http.StatusUnsupportedMediaType)
				return
			}
			req.Body = http.MaxBytesReader(w, req.Body, s.cfg.MaxBody)
		}
		r2 := req.Clone(req.Context())
		r2.URL.Path = rest
		r2.URL.RawPath = ""
		mux.ServeHTTP(w, r2)
	})
}

// cutToken checks that path starts with /TOKEN/ (in constant time) and
// returns the rest, starting with "/".
func (s *Server) cutToken(path string) (string, bool) {
	p := strings.TrimPrefix(path, "/")
	tok, rest, found := strings.Cut(p, "/")
	if subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) != 1 {
		return "", false
	}
	if !found {
		return "", false
	}
	return "/" + rest, true
}

func (s *Server) servePage(w http.ResponseWriter, req *http.Request) {
	s.serveStatic("static/index.html", "text/html; charset=utf-8")(w, req)
}

func (s *Server) serveStatic(name, ctype string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		b, err := static.ReadFile(name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.Write(b)
	}
}

// writeJSON answers v as JSON, passed whole through the host's redactor
// last: whatever a message or a file quoted, no credential the host knows
// leaves (the texts most likely to hold one were redacted before).
func (s *Server) writeJSON(w http.ResponseWriter, code int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the page shows every text as text
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, s.cfg.Host.Redact(b.String()))
}

// apiError answers {"error": msg} with code.
func (s *Server) apiError(w http.ResponseWriter, code int, format string, args ...any) {
	s.writeJSON(w, code, map[string]string{"error": fmt.Sprintf(format, args...)})
}

// readJSON decodes a bounded request body into v, answering the problem
// when it cannot.
func (s *Server) readJSON(w http.ResponseWriter, req *http.Request, v any) bool {
	dec := json.NewDecoder(req.Body)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		if me, ok := errors.AsType[*http.MaxBytesError](err); ok {
			s.apiError(w, http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", me.Limit)
			return false
		}
		s.apiError(w, http.StatusBadRequest, "the request body is not the JSON expected: %v", err)
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		s.apiError(w, http.StatusBadRequest, "the request body holds more than one JSON value")
		return false
	}
	return true
}

// acquire takes a run slot, or answers 503 when all are taken.
func (s *Server) acquire(w http.ResponseWriter) (func(), bool) {
	select {
	case s.runs <- struct{}{}:
		return func() { <-s.runs }, true
	default:
		w.Header().Set("Retry-After", "1")
		s.apiError(w, http.StatusServiceUnavailable, "busy: %d runs are going on; wait for one to end", cap(s.runs))
		return nil, false
	}
}

// runContext bounds one run.
func (s *Server) runContext(req *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(req.Context(), s.cfg.RunTimeout)
}
