package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MaxRequests bounds the requests a call sends on the wire, each redirect
// hop and each retry included: a server that redirects or fails every
// request cannot multiply a plugin's requests.
func TestWireRequestsBounded(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n < 3 {
			http.Redirect(w, r, "/r?n="+strconv.Itoa(n+1), http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	p := testProxy(t, card, nil, nil, Limits{MaxRequests: 10}, nil)
	call := p.NewCall("demo", access("card"))
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		_, err = call.Do(context.Background(), &Request{Service: "card", Path: "/r", Query: url.Values{"n": {"0"}},
			Retry: &RetryPolicy{Max: 3, Backoff: 1}})
	}
	require.ErrorIs(t, err, ErrLimit)
	assert.Contains(t, err.Error(), "redirects and retries included")
	assert.Equal(t, int64(10), card.n.Load(), "requests on the wire")
	assert.Equal(t, 1, call.Requests(), "one request of the step, redirected and retried")
}

// Headers that servers and their front ends read as another path (so a
// request under a declared prefix would reach another one) or another
// client address (campus services trust the campus network's) are
// refused, whatever their letter case, before anything leaves.
func TestPathAndAddressHeadersRefused(t *testing.T) {
	card := newRecorder(t, echo)
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card:/api/scores/"))
	for _, h := range []string{"X-Original-URL", "x-rewrite-url", "X-Host", "X-Forwarded-Prefix", "x-forwarded-port",
		"X-Forwarded-Server", "X-Client-IP", "Client-IP", "True-Client-IP", "X-Originating-IP", "X-Remote-IP",
		"X-Remote-Addr", "X-Cluster-Client-IP", "CF-Connecting-IP", "Fastly-Client-IP"} {
		_, err := call.Do(context.Background(), &Request{Service: "card", Path: "/api/scores/x",
			Header: http.Header{h: {"/admin/delete"}}})
		require.ErrorIs(t, err, ErrRefused, h)
	}
	assert.Equal(t, int64(0), card.n.Load())
	_, err := call.Do(context.Background(), &Request{Service: "card", Path: "/api/scores/x", Header: http.Header{"X-Requested-With": {"app"}}})
	require.NoError(t, err, "other headers still go")
}

// A server that answers 101 Switching Protocols (which the proxy never
// asks for: a step may not set Upgrade or Connection) hands over the raw
// connection, which neither the request timeout nor the caller's deadline
// closes: reading it to its end waited for as long as the server kept it
// open. Such an answer fails the request at once.
func TestSwitchingProtocolsRefused(t *testing.T) {
	origin := rawHTTP(t, func(c net.Conn, _ *http.Request) {
		c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n" + portalSess))
		// Held open until the client closes it (or a while).
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, c)
	})
	u, err := url.Parse(origin)
	require.NoError(t, err)
	port, err := strconv.Atoi(u.Port())
	require.NoError(t, err)
	cat := Catalogue{"portal": &Service{Name: "portal", Origin: origin, Auth: Auth{Cookies: []string{"SESSION"}}}}
	p := New(Config{Catalogue: cat, Keystore: MemKeystore(testSecrets()),
		Resolve: map[string]string{"web.example:" + strconv.Itoa(port): "127.0.0.1"}})
	web := "http://web.example:" + strconv.Itoa(port)
	a := access("portal")
	a.Web = append(a.Web, webOrigin("http", "web.example", port))
	call := p.NewCall("d", a)
	for _, r := range []*Request{{Service: "portal", Path: "/"}, {URL: web + "/"}} {
		resp, err := call.Do(context.Background(), r)
		require.Error(t, err, "%+v", resp)
		assert.Contains(t, err.Error(), "switch")
		assertNoSecret(t, "error", err.Error())
	}
}
