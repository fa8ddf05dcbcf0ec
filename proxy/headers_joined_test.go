package proxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A step sees a response header's lines joined with ", " (the request
// step's headers, the trace). A server that writes a list header one
// element a line (as it parsed it) splits a session value holding ", "
// (a Digest or a list-shaped Authorization) into lines none of which is
// the session; joined, they are. Each header is redacted as the step
// will see it, joined. The same session in two lines, and a value
// folded (obs-fold) at its space, which Go's client reads as one space,
// are redacted too: what the step reads is the same for two random
// sessions once each is a marker.
func TestHeaderLinesAreRedactedAsJoined(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		w.Header()["X-List"] = strings.Split(a, ", ")
		w.Header()["X-Twice"] = []string{a, a}
	})
	observe := func(session string) string {
		call := portalCall(t, srv.URL, session)
		resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/x"})
		require.NoError(t, err)
		var b strings.Builder
		for _, k := range []string{"X-List", "X-Twice"} {
			fmt.Fprintf(&b, "%s: %q\n", k, strings.Join(resp.Header.Values(k), ", "))
		}
		out := b.String()
		assert.NotContains(t, out, session)
		return strings.ReplaceAll(out, session, "<SESSION>")
	}
	a := observe(`List u8f3k2, a81fe0c7, 6629fae4, 9393a053`)
	z := observe(`List q1w9e7, 0b7e2a9c, 1f0e9d8c, 7b6a5948`)
	assert.Equal(t, a, z)

	// A folded header, from a server of raw bytes.
	origin := rawHTTP(t, func(c net.Conn, req *http.Request) {
		scheme, tok, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Fold: %s\r\n %s\r\nX-Fold-Tab: x\r\n\t%s %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", scheme, tok, scheme, tok)
	})
	foldObserve := func(session string) string {
		call := portalCall(t, origin, session)
		resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/x"})
		require.NoError(t, err)
		out := fmt.Sprintf("%q %q", resp.Header.Values("X-Fold"), resp.Header.Values("X-Fold-Tab"))
		_, tok, _ := strings.Cut(session, " ")
		assert.NotContains(t, out, tok)
		return strings.ReplaceAll(out, tok, "<TOKEN>")
	}
	assert.Equal(t, foldObserve("Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0"), foldObserve("Bearer 0a1b2c3d4e5f60718293a4b5c6d7e8f9"))
}
