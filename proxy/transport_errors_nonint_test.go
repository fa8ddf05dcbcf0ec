package proxy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Go's HTTP client quotes the bytes of a malformed answer in its errors
// (the status line's version or code, a header line without a colon, a
// Content-Length, a transfer or content encoding), with Go's escapes (\"
// and \\ for a quote and a backslash), and the proxy's own errors quote
// the answer's Content-Encoding. A server that echoes a session there,
// after text the step chose, gives the step that error. Each quotes a
// whole field, never a cut the step's text chooses, and the redactor
// reads Go's escapes: for two random sessions (quotes and backslashes
// included) every error reads the same once each session is a marker.
func TestTransportErrorsQuoteNoCredential(t *testing.T) {
	origin := rawHTTP(t, func(c net.Conn, req *http.Request) {
		a, q := req.Header.Get("Authorization"), req.URL.Query().Get("q")
		switch req.URL.Path {
		case "/status":
			fmt.Fprintf(c, "HTTP/1.1 %s%s\r\n\r\n", q, a)
		case "/proto":
			fmt.Fprintf(c, "%s%s 200 OK\r\n\r\n", q, a)
		case "/header":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\n%s%s\r\n\r\n", q, a)
		case "/clen":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %s%s\r\n\r\n", q, a)
		case "/te":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: %s%s\r\n\r\n", q, a)
		case "/ce":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Encoding: %s%s\r\nContent-Length: 2\r\n\r\nab", q, a)
		}
	})
	observe := func(session string) string {
		call := portalCall(t, origin, session)
		var b strings.Builder
		for _, p := range []string{"/status", "/proto", "/header", "/clen", "/te", "/ce"} {
			for _, q := range []string{"", "2", "20", "x: ", "HTTP/1.1 "} {
				resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: p, Query: map[string][]string{"q": {q}}})
				if err != nil {
					fmt.Fprintf(&b, "%s %q: %v\n", p, q, err)
				} else {
					fmt.Fprintf(&b, "%s %q: %d %q\n", p, q, resp.Status, resp.Header)
				}
			}
		}
		out := strings.ReplaceAll(b.String(), origin, "ORIGIN")
		assert.NotContains(t, out, session)
		return strings.ReplaceAll(out, session, "<SESSION>")
	}
	const alphabet = `"\abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/=`
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func() string {
		b := make([]byte, 32)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 4 {
		a, z := draw(), draw()
		assert.Equal(t, observe(a), observe(z), "sessions %q and %q", a, z)
	}
}
