package registry

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the Streamable HTTP transport.
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN).
	Token string
	// MaxSessions bounds the sessions open at once (DefaultMaxSessions
	// when 0); an initialize beyond it is refused with 503.
	MaxSessions int
	// SessionTimeout closes a session idle this long (DefaultSessionTimeout
	// when 0), with its taint and approvals.
	SessionTimeout time.Duration
	// MaxBody bounds one request body (DefaultMaxBody when 0).
	MaxBody int64
}

// The HTTP transport's default bounds.
const (
	DefaultMaxSessions    = 64
	DefaultSessionTimeout = 30 * time.Minute
	DefaultMaxBody        = 4 << 20
)

// HTTPHandler serves the tools over MCP's Streamable HTTP transport. It is
// meant for a loopback listener: a request whose Host is not the server's
// own loopback name and port, or whose Origin (when sent) is not that same
// origin, is refused with 403 before anything else, which is the defence
// against DNS rebinding the MCP specification asks for; then the bearer
// token is checked (401). Each session has its own taint and approvals;
// the bounds on calls running and waiting are the server's, across
// sessions, as on stdio.
func (s *MCPService) HTTPHandler(o HTTPOptions) http.Handler {
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: o.SessionTimeout, MaxRequestBodyBytes: o.MaxBody})
	adm := &admission{ids: map[string]bool{}}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if err := checkLocalOrigin(req); err != nil {
			http.Error(w, "Forbidden: "+err.Error(), http.StatusForbidden)
			return
		}
		if o.Token != "" {
			got, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(o.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="harness mcp"`)
				http.Error(w, "Unauthorized: this server needs its bearer token (Authorization: Bearer ...)", http.StatusUnauthorized)
				return
			}
		}
		if req.Method == http.MethodPost && req.Header.Get("Mcp-Session-Id") == "" {
			body, isInit, err := peekInitialize(w, req, o.MaxBody)
			if err != nil {
				code := http.StatusBadRequest
				if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
					code = http.StatusRequestEntityTooLarge
				}
				http.Error(w, http.StatusText(code)+": "+err.Error(), code)
				return
			}
			if isInit {
				n, ok := adm.reserve(s.srv, o.MaxSessions)
				if !ok {
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Retry-After", "60")
					w.WriteHeader(http.StatusServiceUnavailable)
					b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{Error: &jsonrpc.Error{Code: CodeBusy,
						Message: fmt.Sprintf("busy: %d sessions are open; close one (DELETE) or wait for an idle one to time out", n)}})
					w.Write(b)
					return
				}
				req.Body = io.NopCloser(bytes.NewReader(body))
				sdk.ServeHTTP(w, req)
				adm.settle(w.Header().Get("Mcp-Session-Id"))
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		sdk.ServeHTTP(w, req)
	})
}

// admission bounds the sessions an HTTP handler opens. It counts only the
// sessions its own initialize requests opened and that the server still
// holds: the SDK also opens a passing session for a stateless request such
// as server/discover, which a client sends before initialize, and counting
// those would refuse a client its first session. A slot is reserved under
// the lock while an initialize is served, so concurrent ones cannot
// overshoot the bound.
type admission struct {
	mu      sync.Mutex
	ids     map[string]bool // sessions opened through this handler
	pending int             // initialize requests being served
}

func (a *admission) reserve(srv *mcp.Server, max int) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	live := map[string]bool{}
	for ss := range srv.Sessions() {
		live[ss.ID()] = true
	}
	for id := range a.ids {
		if !live[id] {
			delete(a.ids, id)
		}
	}
	n := len(a.ids) + a.pending
	if n >= max {
		return len(a.ids), false
	}
	a.pending++
	return n, true
}

// settle ends a reservation; id is the session the initialize opened, if any.
func (a *admission) settle(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending--
	if id != "" {
		a.ids[id] = true
	}
}

// peekInitialize reads a session-less POST's body (at most max bytes) and
// reports whether it is an initialize request; the caller puts the body back.
func peekInitialize(w http.ResponseWriter, req *http.Request, max int64) ([]byte, bool, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, max))
	if err != nil {
		return nil, false, fmt.Errorf("reading the body: %w", err)
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return body, false, nil // the SDK answers a malformed message itself
	}
	r, ok := msg.(*jsonrpc.Request)
	return body, ok && r.Method == "initialize", nil
}

// CheckLocalOrigin refuses a request that did not come to a loopback name
// of the listener it arrived on, or that a page of another origin sent:
// the defence against DNS rebinding of every loopback HTTP server of the
// engine (the MCP transport, `harness dev`).
func CheckLocalOrigin(req *http.Request) error { return checkLocalOrigin(req) }

// checkLocalOrigin is CheckLocalOrigin.
func checkLocalOrigin(req *http.Request) error {
	local, _ := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return fmt.Errorf("no listener address")
	}
	_, port, err := net.SplitHostPort(local.String())
	if err != nil {
		return fmt.Errorf("listener address %q: %v", local, err)
	}
	if !loopbackHostPort(req.Host, port) {
		return fmt.Errorf("Host %q is not this server's loopback address (127.0.0.1, [::1] or localhost, port %s)", req.Host, port)
	}
	if origin := req.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || u.Scheme != "http" || u.Path != "" || u.User != nil || !loopbackHostPort(u.Host, port) {
			return fmt.Errorf("Origin %q is not this server's own origin: a web page may not call it", origin)
		}
	}
	return nil
}

// loopbackHostPort reports whether hostport names a loopback host (an IP
// literal or localhost) with the given port.
func loopbackHostPort(hostport, port string) bool {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil || p != port {
		return false
	}
	return IsLoopbackHost(h)
}

// IsLoopbackHost reports whether h is localhost or a loopback IP literal.
func IsLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	return ip != nil && ip.IsLoopback()
}
