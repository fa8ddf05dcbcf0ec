package proxy

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sealedName = "the simulated campus (--campus)"

// noDial replaces the proxy's dialer: a sealed refusal must be decided
// before any connection is attempted, so reaching it is a failure.
func noDial(t *testing.T, p *Proxy) *atomic.Int64 {
	var n atomic.Int64
	p.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.Add(1)
		t.Errorf("sealed proxy dialled %s %s", network, addr)
		return nil, &net.OpError{Op: "dial", Err: net.UnknownNetworkError("test: no dial")}
	}
	return &n
}

// In the sealed setting (--campus) a built-in service the simulated
// campus does not serve fails naming the service, and no connection,
// lookup or packet is made for it; a loopback service still works.
func TestSealedRefusesServicesOffLoopback(t *testing.T) {
	local := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	cat := Builtin().Merge(Catalogue{"portal": {Name: "portal", Origin: local.URL}})
	p := New(Config{Catalogue: cat, Sealed: sealedName})
	call := p.NewCall("demo", access("library", "course", "portal"))
	for _, svc := range []string{"library", "course"} {
		_, err := call.Do(context.Background(), &Request{Service: svc, Path: "/"})
		require.ErrorIs(t, err, ErrRefused, svc)
		assert.Contains(t, err.Error(), `campus service "`+svc+`" is not served by `+sealedName, svc)
		assert.Contains(t, err.Error(), "nothing beyond loopback", svc)
	}
	resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/x"})
	require.NoError(t, err)
	assert.Equal(t, "ok", string(resp.Body))
	assert.Equal(t, int64(1), local.n.Load())
}

// The dial decision itself: an address that cannot route (TEST-NET-1),
// a campus address, a public one and a name are refused by the sealed
// proxy before its dialer is called, for campus and web connections,
// directly and through --resolve mappings.
func TestSealedDialDecision(t *testing.T) {
	resolve := map[string]string{
		"news.example.edu.cn:443": "192.0.2.1:443", // cannot route
		"127.0.0.1:18099":         "192.0.2.1",     // a loopback origin mapped off loopback
		"ok.example.edu.cn:443":   "127.0.0.1:18443",
	}
	cat := Catalogue{"local": {Name: "local", Origin: "http://127.0.0.1:18099"}}
	p := New(Config{Catalogue: cat, Resolve: resolve, Sealed: sealedName})
	dials := noDial(t, p)
	ctx := context.Background()
	for _, addr := range []string{"192.0.2.1:443", "162.105.129.1:443", "1.1.1.1:443", "www.lib.pku.edu.cn:443", "127.0.0.1:18099", "news.example.edu.cn:443"} {
		_, err := p.dialCampus(ctx, "tcp", addr)
		require.ErrorIs(t, err, ErrRefused, addr)
		assert.Contains(t, err.Error(), sealedName+" reaches nothing beyond loopback", addr)
		_, err = p.dialWeb(ctx, "tcp", addr)
		require.ErrorIs(t, err, ErrRefused, addr)
		assert.Contains(t, err.Error(), sealedName+" reaches nothing beyond loopback", addr)
	}
	assert.Equal(t, int64(0), dials.Load())

	// A loopback target is handed to the dialer.
	var reached []string
	p.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		reached = append(reached, addr)
		return nil, net.UnknownNetworkError("test: no dial")
	}
	_, err := p.dialWeb(ctx, "tcp", "ok.example.edu.cn:443")
	require.Error(t, err)
	assert.Equal(t, []string{"127.0.0.1:18443"}, reached, "a loopback mapping reaches the dialer")

	// Through a call: the mapped loopback service is refused naming the
	// service, the web origin mapped to TEST-NET-1 at the dial decision.
	dials = noDial(t, p)
	var acc = access("local")
	acc.Web = append(acc.Web, webOrigin("https", "news.example.edu.cn", 443), webOrigin("https", "unmapped.example.edu.cn", 443))
	call := p.NewCall("demo", acc)
	_, err = call.Do(ctx, &Request{Service: "local", Path: "/"})
	require.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), `campus service "local" is not served by `+sealedName)
	start := time.Now()
	for _, u := range []string{"https://news.example.edu.cn/", "https://unmapped.example.edu.cn/"} {
		_, err = call.Do(ctx, &Request{URL: u})
		require.Error(t, err, u)
		assert.Contains(t, err.Error(), "nothing beyond loopback", u)
	}
	assert.Less(t, time.Since(start), 2*time.Second, "refused by the decision, not by a timeout")
	assert.Equal(t, int64(0), dials.Load())
}

// --ca: a local HTTPS server behind --resolve is trusted with its CA, in
// addition to the system roots, for the mapped host only.
func TestResolveCATrustsMappedHostsOnly(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<li class="notice"><a>hello</a></li>`))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	// httptest's certificate names example.com; the second origin is a
	// campus service on the same server, not mapped by --resolve.
	cat := Catalogue{"local": {Name: "local", Origin: "https://127.0.0.1:" + strconv.Itoa(port)}}
	resolve := map[string]string{"example.com:443": "127.0.0.1:" + strconv.Itoa(port)}
	acc := access("local")
	acc.Web = append(acc.Web, webOrigin("https", "example.com", 443))

	without := New(Config{Catalogue: cat, Resolve: resolve}).NewCall("demo", acc)
	_, err := without.Do(context.Background(), &Request{URL: "https://example.com/notices"})
	require.Error(t, err, "without --ca the local certificate is not trusted")
	assert.Contains(t, err.Error(), "certificate")

	p := New(Config{Catalogue: cat, Resolve: resolve, ResolveCA: ca})
	call := p.NewCall("demo", acc)
	resp, err := call.Do(context.Background(), &Request{URL: "https://example.com/notices"})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.Status)
	assert.Contains(t, string(resp.Body), "hello")

	// The same server as an unmapped host: the CA is not trusted there.
	n := hits.Load()
	_, err = call.Do(context.Background(), &Request{Service: "local", Path: "/"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificate")
	assert.Equal(t, n, hits.Load(), "the unmapped host's handshake failed before any request")

	// Sealed with --ca: a mapped loopback HTTPS server still works.
	sp := New(Config{Catalogue: Catalogue{}, Resolve: resolve, ResolveCA: ca, Sealed: sealedName})
	var wacc = access()
	wacc.Web = acc.Web
	resp, err = sp.NewCall("demo", wacc).Do(context.Background(), &Request{URL: "https://example.com/notices"})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.Status)
}
