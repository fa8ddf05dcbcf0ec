package proxy

import (
	"bufio"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// Test credentials: distinct, long enough, and easy to search for.
const (
	cardToken   = "bearer eyJhbGciOiJIUzI1NiJ9.Y2FyZC10b2tlbi0xMjM0NTY.s1gnatur3XyZ"
	portalSess  = "portalSess-1a2b3c4d5e6f7a8b"
	portalJSess = "portalJ5ession-99887766"
	otherSess   = "otherServiceSess-0f0e0d0c0b0a"
	treeholeJWT = "Bearer treeholeJWT-abcdef0123456789"
	xsrfValue   = "xsrf%3Dtoken-4242aa"
)

var allSecrets = []string{cardToken, portalSess, portalJSess, otherSess, treeholeJWT, xsrfValue,
	"eyJhbGciOiJIUzI1NiJ9.Y2FyZC10b2tlbi0xMjM0NTY.s1gnatur3XyZ", "treeholeJWT-abcdef0123456789"}

// assertNoSecret fails when any credential appears in s, raw or in the
// usual encodings.
func assertNoSecret(t testing.TB, what, s string) {
	t.Helper()
	for _, v := range allSecrets {
		for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v), base64.StdEncoding.EncodeToString([]byte(v))} {
			if strings.Contains(s, form) {
				t.Fatalf("%s holds a credential: %q", what, s)
			}
		}
	}
}

// hit records what a loopback server saw.
type hit struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   string
}

// recorder is a loopback server that records every request and answers
// with its handler.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	hits []hit
	n    atomic.Int64
}

func newRecorder(t testing.TB, h http.HandlerFunc) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.n.Add(1)
		var body strings.Builder
		if req.Body != nil {
			b := make([]byte, 1<<16)
			n, _ := req.Body.Read(b)
			body.Write(b[:n])
		}
		r.mu.Lock()
		r.hits = append(r.hits, hit{req.Method, req.URL.Path, req.URL.RawQuery, req.Header.Clone(), body.String()})
		r.mu.Unlock()
		if h != nil {
			h(w, req)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) Hits() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

func (r *recorder) port() int {
	u, _ := url.Parse(r.URL)
	p, _ := strconv.Atoi(u.Port())
	return p
}

// echo answers with the request's Cookie and credential headers in the
// body, the way a careless or hostile endpoint would.
func echo(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("cookie=" + r.Header.Get("Cookie") + "\nauth=" + r.Header.Get("Synjones-Auth") +
		"\nauthorization=" + r.Header.Get("Authorization") + "\npath=" + r.URL.EscapedPath() + "\nquery=" + r.URL.RawQuery))
}

// testProxy builds a proxy whose services card, portal, other and treehole
// live on the given loopback servers.
func testProxy(t testing.TB, card, portal, other *recorder, lim Limits, ks Keystore) *Proxy {
	t.Helper()
	cat := Catalogue{}
	if card != nil {
		cat["card"] = &Service{Name: "card", Origin: card.URL,
			Auth:    Auth{Headers: []string{"synjones-auth"}},
			Login:   Login{Redirect: "/iaaa/login", Status: []int{401}, JSON: map[string][]string{"code": {"401"}}},
			Headers: map[string]string{"synaccesssource": "h5"},
			Query:   map[string]string{"synAccessSource": "h5"}}
		cat["treehole"] = &Service{Name: "treehole", Origin: card.URL,
			Auth: Auth{Cookies: []string{"_session"}, Headers: []string{"Authorization"}},
			CSRF: CSRF{Cookie: "XSRF-TOKEN", Header: "X-XSRF-TOKEN"}}
	}
	if portal != nil {
		cat["portal"] = &Service{Name: "portal", Origin: portal.URL,
			Auth:  Auth{Cookies: []string{"SESSION", "JSESSIONID"}},
			Login: Login{Redirect: "/iaaa/login"}}
	}
	if other != nil {
		cat["other"] = &Service{Name: "other", Origin: other.URL, Auth: Auth{Cookies: []string{"SESSION"}}}
	}
	require.NoError(t, cat.Validate())
	if ks == nil {
		ks = MemKeystore(testSecrets())
	}
	return New(Config{Catalogue: cat, Keystore: ks, Limits: lim})
}

func testSecrets() Secrets {
	return Secrets{
		"card":     {Headers: map[string]string{"synjones-auth": cardToken}},
		"portal":   {Cookies: map[string]string{"SESSION": portalSess, "JSESSIONID": portalJSess}},
		"other":    {Cookies: map[string]string{"SESSION": otherSess}},
		"treehole": {Headers: map[string]string{"Authorization": treeholeJWT}, Cookies: map[string]string{"XSRF-TOKEN": xsrfValue, "_session": "treeholeSessionCookie-77"}},
	}
}

func access(campus ...string) manifest.Access {
	var a manifest.Access
	for _, c := range campus {
		name, paths, _ := strings.Cut(c, ":")
		ca := manifest.CampusAccess{Service: name}
		if paths != "" {
			ca.Paths = strings.Split(paths, ",")
		}
		a.Campus = append(a.Campus, ca)
	}
	return a
}

func webOrigin(scheme, host string, port int) manifest.Origin {
	return manifest.Origin{Scheme: scheme, Host: host, Port: port}
}

// rawHTTP serves raw bytes on loopback: answer writes whatever it likes,
// malformed or not, to the connection of each request it is handed (read
// with Go's parser). It returns the origin.
func rawHTTP(t *testing.T, answer func(c net.Conn, req *http.Request)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				answer(c, req)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// portalCall is a call to one service, portal at origin, whose session is
// the Authorization header session.
func portalCall(t *testing.T, origin, session string) *Call {
	t.Helper()
	cat := Catalogue{"portal": &Service{Name: "portal", Origin: origin, Auth: Auth{Headers: []string{"Authorization"}}}}
	require.NoError(t, cat.Validate())
	ks := MemKeystore(Secrets{"portal": {Headers: map[string]string{"Authorization": session}}})
	return New(Config{Catalogue: cat, Keystore: ks}).NewCall("d", access("portal"))
}
