package proxy

import (
	"context"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWebLoopbackRefusedUnlessResolved(t *testing.T) {
	srv := newRecorder(t, echo)
	port := srv.port()
	ps := strconv.Itoa(port)
	p := New(Config{Catalogue: Catalogue{}})
	var acc manifest.Access
	for _, h := range []string{"127.0.0.1", "localhost", "::1", "0.0.0.0", "2130706433", "127.1", "0x7f.1", "127.0.0.01"} {
		acc.Web = append(acc.Web, webOrigin("http", h, port))
	}
	call := p.NewCall("demo", acc)
	for _, u := range []string{
		"http://127.0.0.1:" + ps + "/", "http://localhost:" + ps + "/", "http://[::1]:" + ps + "/",
		"http://0.0.0.0:" + ps + "/", "http://2130706433:" + ps + "/", "http://127.1:" + ps + "/",
		"http://0x7f.1:" + ps + "/", "http://0x7f000001:" + ps + "/", "http://017700000001:" + ps + "/",
		"http://127.0.0.01:" + ps + "/", "http://127.0.0.1.:" + ps + "/", "http://[::ffff:127.0.0.1]:" + ps + "/",
	} {
		_, err := call.Do(context.Background(), &Request{URL: u})
		require.ErrorIs(t, err, ErrRefused, u)
	}
	assert.Equal(t, int64(0), srv.n.Load(), "a refused web request reached the loopback server")

	// Mapped with Resolve, the same host:port is reachable, and only it.
	p = New(Config{Catalogue: Catalogue{}, Resolve: map[string]string{
		"news.example.edu.cn:80":  "127.0.0.1:" + ps,
		"127.0.0.1:" + ps:         "127.0.0.1",
		"localhost:" + ps:         "127.0.0.1:" + ps,
		"other.example.edu.cn:81": "127.0.0.1:" + ps,
	}})
	acc.Web = append(acc.Web, webOrigin("http", "news.example.edu.cn", 80), webOrigin("http", "other.example.edu.cn", 80))
	call = p.NewCall("demo", acc)
	for _, u := range []string{"http://news.example.edu.cn/a", "http://127.0.0.1:" + ps + "/b", "http://localhost:" + ps + "/c"} {
		resp, err := call.Do(context.Background(), &Request{URL: u})
		require.NoError(t, err, u)
		assert.Equal(t, 200, resp.Status)
	}
	assert.Equal(t, int64(3), srv.n.Load())
	// other.example.edu.cn:80 is declared but only :81 is mapped: refused
	// (its name does not resolve to the loopback server, and never reaches it).
	_, err := call.Do(context.Background(), &Request{URL: "http://other.example.edu.cn:81/"})
	require.ErrorIs(t, err, ErrRefused, "port 81 is not declared")
	assert.Equal(t, int64(3), srv.n.Load())
}

func TestWebOriginsDeclaredOnly(t *testing.T) {
	srv := newRecorder(t, echo)
	ps := strconv.Itoa(srv.port())
	card := newRecorder(t, echo)
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	p.resolve["news.example.edu.cn:80"] = "127.0.0.1:" + ps
	p.resolve["news.example.edu.cn:8080"] = "127.0.0.1:" + ps
	acc := access("card")
	acc.Web = []manifest.Origin{
		webOrigin("http", "news.example.edu.cn", 80),
		webOrigin("https", "portal.pku.edu.cn", 443),
		webOrigin("http", "127.0.0.1", card.port()), // the card service's own host:port
	}
	call := p.NewCall("demo", acc)
	for _, u := range []string{
		"http://news.example.edu.cn:8080/",      // port not declared
		"https://news.example.edu.cn/",          // scheme not declared
		"http://evil.example.com/",              // origin not declared
		"https://portal.pku.edu.cn/",            // a campus host
		"https://anything.pku.edu.cn/",          // a campus domain
		"http://127.0.0.1:" + ps + "/",          // loopback, unmapped
		card.URL + "/",                          // a catalogue origin
		"http://user:pw@news.example.edu.cn/",   // user info
		"ftp://news.example.edu.cn/",            // scheme
		"http:news.example.edu.cn",              // opaque
		"//news.example.edu.cn/",                // no scheme
		"http://news.example.edu.cn\\@evil.com", // backslash trick
		"http://news.example.edu.cn/a\\b",       // backslash in the path
	} {
		_, err := call.Do(context.Background(), &Request{URL: u})
		require.ErrorIs(t, err, ErrRefused, u)
	}
	assert.Equal(t, int64(0), srv.n.Load())
	assert.Equal(t, int64(0), card.n.Load())
	_, err := call.Do(context.Background(), &Request{URL: "https://portal.pku.edu.cn/"})
	assert.Contains(t, err.Error(), "campus host")

	// A declared origin works, carries no campus credential, and its
	// response is still redacted.
	resp, err := call.Do(context.Background(), &Request{URL: "http://news.example.edu.cn/n?x=1", Query: map[string][]string{"y": {"2"}}})
	require.NoError(t, err)
	h := srv.Hits()[0]
	assert.Empty(t, h.Header.Get("Cookie"))
	assert.Empty(t, h.Header.Get("Synjones-Auth"))
	assert.Equal(t, "x=1&y=2", h.RawQuery)
	assert.Equal(t, "http://news.example.edu.cn/n?x=1&y=2", resp.URL)
}

func TestWebRedirects(t *testing.T) {
	other := newRecorder(t, echo)
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-undeclared":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		case "/to-declared":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "web-cookie-1"})
			http.Redirect(w, r, "http://b.example.org/y", http.StatusFound)
		case "/to-campus":
			http.Redirect(w, r, "https://portal.pku.edu.cn/", http.StatusFound)
		default:
			echo(w, r)
		}
	})
	ps := strconv.Itoa(srv.port())
	p := New(Config{Catalogue: Catalogue{}, Resolve: map[string]string{
		"a.example.org:80": "127.0.0.1:" + ps, "b.example.org:80": "127.0.0.1:" + ps}})
	call := p.NewCall("demo", manifest.Access{Web: []manifest.Origin{webOrigin("http", "a.example.org", 80), webOrigin("http", "b.example.org", 80)}})
	for _, path := range []string{"/to-undeclared", "/to-campus"} {
		resp, err := call.Do(context.Background(), &Request{URL: "http://a.example.org" + path})
		require.NoError(t, err)
		assert.Equal(t, 302, resp.Status)
	}
	assert.Equal(t, int64(0), other.n.Load())
	resp, err := call.Do(context.Background(), &Request{URL: "http://a.example.org/to-declared"})
	require.NoError(t, err)
	assert.Equal(t, "http://b.example.org/y", resp.URL)
	// a.example.org's cookie is not sent to b.example.org.
	last := srv.Hits()[len(srv.Hits())-1]
	assert.Empty(t, last.Header.Get("Cookie"))
	_, err = call.Do(context.Background(), &Request{URL: "http://a.example.org/again"})
	require.NoError(t, err)
	last = srv.Hits()[len(srv.Hits())-1]
	assert.Equal(t, "sid=web-cookie-1", last.Header.Get("Cookie"))
}

func TestGuardDecision(t *testing.T) {
	refused := []string{
		"127.0.0.1", "127.255.255.254", "0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255",
		"172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255", "169.254.169.254",
		"100.64.0.1", "100.127.255.255", "224.0.0.1", "239.255.255.250", "255.255.255.255",
		"192.0.0.8", "198.18.0.1", "240.0.0.1",
		"::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "::ffff:10.0.0.1",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "64:ff9b::7f00:1",
		"64:ff9b:1::a00:1", "2001:db8::1", "2002:7f00:1::1", "2001::1", "::127.0.0.1",
		// The campus network: services there trust the device's address.
		"162.105.129.1", "162.105.0.1", "::ffff:162.105.3.4",
	}
	p := New(Config{})
	for _, s := range refused {
		err := p.checkAddr(netip.MustParseAddr(s))
		require.ErrorIs(t, err, ErrRefused, s)
	}
	for _, s := range []string{"1.1.1.1", "8.8.8.8", "162.104.255.255", "162.106.0.1", "2001:4860:4860::8888", "2400:3200::1"} {
		require.NoError(t, p.checkAddr(netip.MustParseAddr(s)), s)
	}
	// The Control hook applies the same decision to every connection.
	require.ErrorIs(t, p.guardControl("tcp4", "10.0.0.1:443", nil), ErrRefused)
	require.ErrorIs(t, p.guardControl("tcp6", "[fe80::1]:80", nil), ErrRefused)
	require.ErrorIs(t, p.guardControl("udp4", "1.1.1.1:53", nil), ErrRefused)
	require.NoError(t, p.guardControl("tcp4", "1.1.1.1:443", nil))
}

// The campus address blocks are catalogue data: an entry's networks
// extend the built-in block for web requests (the decision alone; nothing
// is dialled), and a services file names them.
func TestCampusNetworksFromCatalogue(t *testing.T) {
	cat := Catalogue{"medical": &Service{Name: "medical", Origin: "https://bjmu.example.cn", Networks: []string{"115.27.0.0/16", "2001:da8:201::/48"}}}
	require.NoError(t, cat.Validate())
	p := New(Config{Catalogue: cat})
	for _, s := range []string{"115.27.4.5", "2001:da8:201::1", "162.105.1.1", "::ffff:115.27.0.1"} {
		err := p.checkAddr(netip.MustParseAddr(s))
		require.ErrorIs(t, err, ErrRefused, s)
		assert.Contains(t, err.Error(), "campus network", s)
		require.ErrorIs(t, p.guardControl("tcp4", netip.AddrPortFrom(netip.MustParseAddr(s), 443).String(), nil), ErrRefused, s)
	}
	require.NoError(t, p.checkAddr(netip.MustParseAddr("115.28.0.1")))
	require.NoError(t, New(Config{}).checkAddr(netip.MustParseAddr("115.27.4.5")), "the built-in catalogue knows only its block")

	dir := t.TempDir()
	f := filepath.Join(dir, "services.yaml")
	require.NoError(t, os.WriteFile(f, []byte("medical:\n  origin: https://bjmu.example.cn\n  networks: [115.27.0.0/16]\n"), 0o600))
	c2, err := LoadServices(f)
	require.NoError(t, err)
	assert.Equal(t, []string{"115.27.0.0/16"}, c2["medical"].Networks)
	require.ErrorIs(t, New(Config{Catalogue: Builtin().Merge(c2)}).checkAddr(netip.MustParseAddr("115.27.9.9")), ErrRefused)
	require.NoError(t, os.WriteFile(f, []byte("medical:\n  origin: https://bjmu.example.cn\n  networks: [115.27.0.0]\n"), 0o600))
	_, err = LoadServices(f)
	require.ErrorContains(t, err, "address block")
}
