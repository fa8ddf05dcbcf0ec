package registry

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
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
			n := 0
			for range s.srv.Sessions() {
				n++
			}
			if n >= o.MaxSessions {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "60")
				w.WriteHeader(http.StatusServiceUnavailable)
				b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{Error: &jsonrpc.Error{Code: CodeBusy,
					Message: fmt.Sprintf("busy: %d sessions are open; close one (DELETE) or wait for an idle one to time out", n)}})
				w.Write(b)
				return
			}
		}
		sdk.ServeHTTP(w, req)
	})
}

// checkLocalOrigin refuses a request that did not come to a loopback name
// of the listener it arrived on, or that a page of another origin sent.
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
