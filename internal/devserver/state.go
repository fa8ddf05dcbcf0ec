package devserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/pkuinfo/harness/review"
	"github.com/pkuinfo/harness/steps"
)

// snapshot is the document as it was last read.
type snapshot struct {
	at      time.Time
	plugin  *manifest.Plugin
	diags   diag.List
	readErr string
	doc     *host.Document // nil when the document did not parse
	hash    string
	review  string
	suite   *plugintest.Suite
}

// load reads and checks the document, compiles it for the host and renders
// its review sheet.
func (s *Server) load() *snapshot {
	sn := &snapshot{at: time.Now()}
	p, l, err := s.cfg.Load()
	if err != nil {
		sn.readErr = err.Error()
		return sn
	}
	sn.plugin, sn.diags = p, l
	if p == nil {
		return sn
	}
	if h, err := p.Files.Hash(); err == nil {
		sn.hash = h
	}
	var b bytes.Buffer
	if err := review.NewSheet(p, review.Info{Hash: sn.hash, Trust: string(s.cfg.Trust)}).WriteText(&b, false); err == nil {
		sn.review = b.String()
	}
	if p.ID != "" {
		sn.doc, _ = s.cfg.Host.Load(p) // lint's list already holds the compile problems
	}
	if len(p.Tests) > 0 {
		sn.suite, _ = plugintest.Parse(p)
	}
	return sn
}

// current returns the last snapshot.
func (s *Server) current() *snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

// problemView is one lint problem as the page shows it.
type problemView struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Text     string `json:"text"` // FILE:LINE:COL: message
}

type toolView struct {
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Effect      string         `json:"effect"`
	UserOnly    bool           `json:"userOnly"`
	Input       map[string]any `json:"input"`
	File        string         `json:"file"`
	Runnable    bool           `json:"runnable"` // compiled
}

type widgetView struct {
	Key        string `json:"key"`
	Title      string `json:"title"`
	DataSource string `json:"dataSource,omitempty"`
	Template   string `json:"template"`
}

// prefView is a preference as the settings registry lists it (key
// PLUGIN.NAME, the agent changes it with settings__change).
type prefView struct {
	Key     string            `json:"key"`
	Title   string            `json:"title"`
	Kind    string            `json:"kind"`
	Options []manifest.Option `json:"options,omitempty"`
	Default any               `json:"default,omitempty"`
	Screen  string            `json:"screen,omitempty"`
	Schema  map[string]any    `json:"schema"`
}

type responseView struct {
	Label string `json:"label"`
	Body  string `json:"body"`
}

type runView struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

type stateView struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Icon      string         `json:"icon,omitempty"`
	MaxSteps  int            `json:"maxAgentSteps,omitempty"`
	Path      string         `json:"path"`
	Mode      string         `json:"mode"`
	Trust     string         `json:"trust"`
	Loaded    string         `json:"loaded"`
	Valid     bool           `json:"valid"`
	ReadError string         `json:"readError,omitempty"`
	Problems  []problemView  `json:"problems"`
	Dropped   int            `json:"dropped,omitempty"`
	Review    string         `json:"review"`
	Tools     []toolView     `json:"tools"`
	Widgets   []widgetView   `json:"widgets"`
	Prefs     []prefView     `json:"preferences"`
	Responses []responseView `json:"responses"`
	Runs      []runView      `json:"runs"`
	Files     []string       `json:"files"`
	CanSave   bool           `json:"canSave"`
}

// maxResponseView bounds one recorded response offered to the scratch pane.
const maxResponseView = 256 << 10

func (s *Server) serveState(w http.ResponseWriter, req *http.Request) {
	sn := s.current()
	v := stateView{Path: s.cfg.Path, Mode: s.cfg.Mode, Trust: string(s.cfg.Trust), Loaded: sn.at.Format(time.TimeOnly),
		ReadError: sn.readErr, Review: sn.review, CanSave: s.recording(),
		Problems: []problemView{}, Tools: []toolView{}, Widgets: []widgetView{}, Prefs: []prefView{}, Responses: []responseView{}, Runs: []runView{}, Files: []string{}}
	v.Valid = sn.readErr == "" && sn.plugin != nil && !sn.diags.HasErrors()
	for _, d := range sn.diags.Items {
		v.Problems = append(v.Problems, problemView{File: d.Pos.File, Line: d.Pos.Line, Col: d.Pos.Col,
			Severity: d.Severity.String(), Message: d.Msg, Text: d.String()})
	}
	v.Dropped = sn.diags.Dropped
	if p := sn.plugin; p != nil {
		v.ID, v.Name, v.Icon, v.MaxSteps = p.ID, p.Name, p.Icon, p.MaxAgentSteps
		v.Files = p.Files.Names()
		for _, t := range p.Tools {
			tv := toolView{Name: t.Name, Title: t.Title, Description: t.Description, Effect: string(t.Effect),
				UserOnly: t.UserOnly, Input: t.Input, File: t.File}
			if sn.doc != nil {
				_, tv.Runnable = sn.doc.Program().Limits(t.Name)
			}
			v.Tools = append(v.Tools, tv)
		}
		for _, wd := range p.Contributes.Widgets {
			v.Widgets = append(v.Widgets, widgetView{Key: wd.Key, Title: wd.Title, DataSource: wd.DataSource, Template: widgetTemplate(wd)})
		}
		for _, pr := range p.Preferences {
			v.Prefs = append(v.Prefs, prefView{Key: p.ID + "." + pr.Name, Title: pr.Title, Kind: pr.Kind, Options: pr.Options,
				Default: pr.Default, Screen: pr.Screen, Schema: pr.Schema})
		}
		if sn.suite != nil {
			for _, c := range sn.suite.Cases() {
				for i, e := range c.Exchanges {
					if len(e.Resp.Body) == 0 || len(e.Resp.Body) > maxResponseView || !utf8.Valid(e.Resp.Body) {
						continue
					}
					where := e.Service
					v.Responses = append(v.Responses, responseView{
						Label: fmt.Sprintf("%s: %s #%d: %s %s %s", c.File, c.Name, i+1, where, orGET(e.Method), e.Path),
						Body:  s.cfg.Host.Redact(string(e.Resp.Body))})
				}
			}
		}
	}
	s.mu.Lock()
	for i := len(s.kept) - 1; i >= 0; i-- {
		r := s.kept[i]
		v.Runs = append(v.Runs, runView{ID: r.ID, Label: r.label()})
		for _, st := range r.Trace {
			for i, rq := range st.Requests {
				if rq.RespBody != "" && !rq.Binary && len(rq.RespBody) <= maxResponseView {
					v.Responses = append(v.Responses, responseView{
						Label: fmt.Sprintf("run %s: step %s #%d: %s %s", r.ID, st.Label, i+1, rq.Method, rq.URL), Body: rq.RespBody})
				}
			}
		}
	}
	s.mu.Unlock()
	s.writeJSON(w, http.StatusOK, v)
}

func orGET(m string) string {
	if m == "" {
		return "GET"
	}
	return m
}

// widgetTemplate names the template a widget uses (its key by default).
func widgetTemplate(w manifest.Widget) string {
	if w.Template != "" {
		return w.Template
	}
	return w.Key
}

// maxFileView bounds a file the page shows.
const maxFileView = 1 << 20

// serveFile answers one file of the document, by its name relative to the
// document (as lint's positions name it). Only the document's own files
// (those that count, as the reader lists them) are served.
func (s *Server) serveFile(w http.ResponseWriter, req *http.Request) {
	name := req.URL.Query().Get("name")
	key := name
	if st, err := os.Stat(s.cfg.Path); err == nil && !st.IsDir() && name == filepath.Base(s.cfg.Path) {
		key = "PLUGIN.md" // a single file is read as PLUGIN.md and named by its own name
	}
	sn := s.current()
	files := manifest.Files(nil)
	if sn.plugin != nil {
		files = sn.plugin.Files
	}
	if _, ok := files[key]; !ok {
		// A document that does not parse still has its files.
		files, _ = manifest.ReadDir(s.cfg.Path)
	}
	b, ok := files[key]
	if !ok || len(b) > maxFileView {
		s.apiError(w, http.StatusNotFound, "the document has no file %q", name)
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]string{"name": name, "text": s.cfg.Host.Redact(steps.CleanString(string(b)))})
}

// maxWatched bounds the entries the watcher looks at.
const maxWatched = 4096

// fingerprint sums the names, sizes and modification times of the files
// under path (or of path itself), so a change of any is seen.
func fingerprint(path string) string {
	h := sha256.New()
	n := 0
	var lines []string
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, p+"\x00error\x00"+err.Error())
			return nil
		}
		if n++; n > maxWatched {
			return filepath.SkipAll
		}
		if d.IsDir() && p != path && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir // .git and the like
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		lines = append(lines, fmt.Sprintf("%s\x00%d\x00%d\x00%v", p, info.Size(), info.ModTime().UnixNano(), info.Mode()))
		return nil
	})
	sort.Strings(lines)
	for _, l := range lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
