package steps_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var hostile = []string{"..", ".", "../admin", "../../etc/passwd", "//evil.example", "a?x=1", "b#frag", "%2e%2e", "%2E%2E%2Fadmin",
	"%2F", "c\\d", "..\\..", "a/../../b", "@evil.example", "http://evil.example/", "x\r\nHost: evil", "二教", "a b", "%00", "?", "#", ";x=1"}

func TestEscapeSegment(t *testing.T) {
	for _, v := range hostile {
		e := steps.EscapeSegment(v)
		assert.NotContains(t, e, "/", v)
		assert.NotContains(t, e, "?", v)
		assert.NotContains(t, e, "#", v)
		assert.NotContains(t, e, ".", v)
		assert.NotContains(t, e, "\\", v)
		back, err := url.PathUnescape(e)
		require.NoError(t, err)
		assert.Equal(t, v, back, "the escape is exact")
	}
	assert.Equal(t, "%2E%2E%2Fadmin", steps.EscapeSegment("../admin"))
	assert.Equal(t, "%252e%252e", steps.EscapeSegment("%2e%2e"), "a percent-encoding stays escaped")
	assert.Equal(t, "%2F%2Fevil%2Eexample", steps.EscapeSegment("//evil.example"))
}

// TestTemplatesCannotEscape sends each hostile value through a path and a
// url template and the real proxy: either the proxy refuses the request, or
// the server sees the value as exactly one segment where the template put
// it, on the declared host.
func TestTemplatesCannotEscape(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	files := manifest.Files{
		"PLUGIN.md":         []byte("---\nid: esc\nname: E\ndescription: E.\nversion: 1.0.0\naccess:\n  campus:\n    - service: portal\n      paths: [/api/rooms/]\n  web: [http://news.example.edu.cn]\n---\nI.\n"),
		"tools/campus.yaml": []byte("description: T.\neffect: read\nsteps:\n  - request:\n      service: portal\n      path: /api/rooms/${ $input.v }/free\n"),
		"tools/web.yaml":    []byte("description: T.\neffect: read\nsteps:\n  - request:\n      url: http://news.example.edu.cn/n/${ $input.v }/x?q=${ $input.v }\n"),
	}
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), "%s", l.Error())
	prog, l := interpreter.Compile(p)
	require.False(t, l.HasErrors(), "%s", l.Error())
	px := proxy.New(proxy.Config{
		Catalogue: proxy.Builtin().Merge(proxy.Catalogue{"portal": &proxy.Service{Name: "portal", Origin: srv.URL}}),
		Resolve:   map[string]string{"news.example.edu.cn:80": srv.Listener.Addr().String()},
	})
	for _, tool := range []string{"campus", "web"} {
		for _, v := range hostile {
			mu.Lock()
			seen = nil
			mu.Unlock()
			_, err := prog.Run(context.Background(), tool, map[string]any{"v": v},
				interpreter.WithTransport(px.NewCall(p.ID, p.Access)))
			mu.Lock()
			got := seen
			mu.Unlock()
			if err != nil {
				assert.True(t, errors.Is(err, proxy.ErrRefused), "%s %q: %v", tool, v, err)
				assert.Empty(t, got, "%s %q: a refused request reaches nothing", tool, v)
				continue
			}
			require.Len(t, got, 1, "%s %q", tool, v)
			r := got[0]
			segs := strings.Split(r.URL.EscapedPath(), "/")
			n, at := 5, 3 // /api/rooms/V/free
			if tool == "web" {
				n, at = 4, 2 // /n/V/x
			}
			require.Len(t, segs, n, "%s %q: %s", tool, v, r.URL.EscapedPath())
			seg, err := url.PathUnescape(segs[at])
			require.NoError(t, err)
			assert.Equal(t, v, seg, "%s: the value is one segment", tool)
			if tool == "web" {
				assert.Equal(t, []string{v}, r.URL.Query()["q"], "the query value is one parameter")
				assert.Len(t, r.URL.Query(), 1)
				assert.Equal(t, "news.example.edu.cn", r.Host)
			}
		}
	}
}
