package proxy

import (
	"bufio"
	"bytes"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalisePath(t *testing.T) {
	cases := []struct{ in, dec, esc, query string }{
		{"/", "/", "/", ""},
		{"/a/b/", "/a/b/", "/a/b/", ""},
		{"/a%2db", "/a-b", "/a%2Db", ""},
		{"/二教", "/二教", "/%E4%BA%8C%E6%95%99", ""},
		{"/a b", "/a b", "/a%20b", ""},
		{"/a;b=c/@x:y", "/a;b=c/@x:y", "/a;b=c/@x:y", ""},
		{"/a?x=1&y=二", "/a", "/a", "x=1&y=%E4%BA%8C"},
		{"/100%25", "/100%", "/100%25", ""},
		{"/..a/a..", "/..a/a..", "/..a/a..", ""},
	}
	for _, c := range cases {
		cp, err := normalisePath(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.dec, cp.decoded, c.in)
		assert.Equal(t, c.esc, cp.escaped, c.in)
		assert.Equal(t, c.query, cp.query, c.in)
	}
}

func TestPrefixMatch(t *testing.T) {
	assert.True(t, prefixMatch("/api/scores/x", "/api/scores/"))
	assert.False(t, prefixMatch("/api/scores", "/api/scores/"))
	assert.True(t, prefixMatch("/api/scores", "/api/scores"))
	assert.True(t, prefixMatch("/api/scores/1", "/api/scores"))
	assert.False(t, prefixMatch("/api/scoresX", "/api/scores"))
	assert.False(t, prefixMatch("/API/scores/", "/api/scores/"))
}

// checkCampusURL is the property every accepted campus path must keep: the
// request goes to the service's origin, with a path under the grant, and
// neither a client nor a server reading the request line sees another host
// or a dot segment.
func checkCampusURL(t *testing.T, call *Call, p string) (*target, bool) {
	tg, err := call.target(&Request{Service: "card", Path: p})
	if err != nil {
		if !strings.Contains(err.Error(), "refused") {
			t.Fatalf("path %q: error without ErrRefused: %v", p, err)
		}
		return nil, false
	}
	u := &tg.u
	if u.Scheme != "https" || u.Host != "bdcard.pku.edu.cn" || u.User != nil {
		t.Fatalf("path %q changed the origin: %s", p, u)
	}
	re, err := url.Parse(u.String())
	if err != nil || re.Host != "bdcard.pku.edu.cn" || re.Scheme != "https" {
		t.Fatalf("path %q: the URL %q reads back as another origin", p, u.String())
	}
	ruri := u.RequestURI()
	if !strings.HasPrefix(ruri, "/") || strings.HasPrefix(ruri, "//") {
		t.Fatalf("path %q: request URI %q", p, ruri)
	}
	// What a server parses from the request line.
	req, _ := http.NewRequest("GET", "", nil)
	req.URL, req.Host = u, u.Host
	var buf bytes.Buffer
	if err := req.Write(&buf); err != nil {
		t.Fatalf("path %q: cannot write request: %v", p, err)
	}
	sr, err := http.ReadRequest(bufio.NewReader(&buf))
	if err != nil {
		t.Fatalf("path %q: a server cannot read the request: %v", p, err)
	}
	if sr.Host != "bdcard.pku.edu.cn" || sr.URL.Host != "" {
		t.Fatalf("path %q: the server sees host %q / %q", p, sr.Host, sr.URL.Host)
	}
	if sr.URL.Path != u.Path {
		t.Fatalf("path %q: the server decodes %q, the proxy checked %q", p, sr.URL.Path, u.Path)
	}
	for _, seg := range strings.Split(sr.URL.Path, "/") {
		name, _, _ := strings.Cut(seg, ";")
		if name == "." || name == ".." || strings.ContainsAny(seg, "/\\") {
			t.Fatalf("path %q: dot segment or slash reached the server: %q", p, sr.URL.Path)
		}
	}
	if !strings.HasPrefix(u.Path, "/api/") || !strings.HasPrefix(path.Clean(sr.URL.Path)+"/", "/api/") {
		t.Fatalf("path %q left the declared prefix: %q", p, sr.URL.Path)
	}
	return tg, true
}

func fuzzCall() *Call {
	p := New(Config{Catalogue: Catalogue{"card": {Name: "card", Origin: "https://bdcard.pku.edu.cn"}}})
	return p.NewCall("fuzz", access("card:/api/"))
}

func FuzzCampusPath(f *testing.F) {
	for _, s := range []string{"/api/x", "//evil/x", "http://evil/", "/..%2f..", "\\\\evil", "@evil", "/api/../x",
		"/api/%2e%2e/x", "/api/..;/x", "/api/%252e%252e/", "/api/x?y=1", "/api/二教", "/api/a%2fb", "/api/x#y",
		"/api/%", "/api/\t", "/api/@evil.com", "/api/:80", "/api/x?@evil/"} {
		f.Add(s, "..")
	}
	f.Add("/api/", "a/b")
	f.Add("/api/", "二教 1?x#y")
	f.Add("/api/", "@evil.com:80")
	call := fuzzCall()
	f.Fuzz(func(t *testing.T, p, value string) {
		if len(p) > 512 || len(value) > 256 {
			return
		}
		checkCampusURL(t, call, p)
		// The allocation-free fast path agrees with the general one.
		if len(p) > 0 && p[0] == '/' && !strings.HasPrefix(p, "//") && simplePath(p) {
			slow, err := normaliseSlow(p)
			if err != nil || slow.decoded != p || slow.escaped != p || slow.query != "" {
				t.Fatalf("fast path accepts %q, slow path gives %+v, %v", p, slow, err)
			}
		}
		// So does the fast form of an escaped path.
		if d, ok := escapedPath(p); ok && len(p) > 0 && p[0] == '/' && !strings.HasPrefix(p, "//") {
			slow, err := normaliseSlow(p)
			if err != nil || slow.decoded != d || slow.escaped != p || slow.query != "" {
				t.Fatalf("escaped fast form takes %q as %q, slow path gives %+v, %v", p, d, slow, err)
			}
		}
		// A template interpolation: the escaped value stays one segment.
		tp := "/api/rooms/" + url.PathEscape(value) + "/free"
		if tg, ok := checkCampusURL(t, call, tp); ok {
			if tg.u.Path != "/api/rooms/"+value+"/free" {
				t.Fatalf("value %q escaped out of its segment: %q", value, tg.u.Path)
			}
		}
	})
}

func TestHostileCampusPathsProperty(t *testing.T) {
	call := fuzzCall()
	for _, p := range []string{"/api/x", "/api/a;b/c", "/api/%41", "/api/x?u=http://evil/", "/api/ x"} {
		_, ok := checkCampusURL(t, call, p)
		assert.True(t, ok, p)
	}
	for _, p := range []string{"//evil/x", "http://evil/", "/..%2f..", "\\\\evil", "@evil", "/api/../x"} {
		_, ok := checkCampusURL(t, call, p)
		assert.False(t, ok, p)
	}
}
