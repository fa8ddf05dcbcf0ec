package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type docServer struct {
	srv      *httptest.Server
	body     atomic.Value // string
	requests atomic.Int64
}

func newDocServer(t *testing.T, other string) *docServer {
	d := &docServer{}
	d.body.Store(doc("u"))
	mux := http.NewServeMux()
	mod := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mux.HandleFunc("/ok/PLUGIN.md", func(w http.ResponseWriter, r *http.Request) {
		b := d.body.Load().(string)
		w.Header().Set("ETag", `"`+hashString(b)+`"`)
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		http.ServeContent(w, r, "PLUGIN.md", mod, strings.NewReader(b))
	})
	mux.HandleFunc("/html/PLUGIN.md", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>login</html>"))
	})
	mux.HandleFunc("/big/PLUGIN.md", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "2097152")
		_, _ = w.Write([]byte(strings.Repeat("x", 2<<20)))
	})
	mux.HandleFunc("/chunked-big/PLUGIN.md", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 40; i++ {
			_, _ = w.Write([]byte(strings.Repeat("x", 64<<10)))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/same/PLUGIN.md", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok/PLUGIN.md", http.StatusFound)
	})
	mux.HandleFunc("/other/PLUGIN.md", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other+"/ok/PLUGIN.md", http.StatusFound)
	})
	mux.HandleFunc("/private/PLUGIN.md", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.1/PLUGIN.md", http.StatusFound)
	})
	mux.HandleFunc("/slow/PLUGIN.md", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.requests.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

func hashString(s string) string {
	h, _ := manifest.Files{"x": []byte(s)}.Hash()
	return strings.Trim(h, "h1:=")
}

func TestFetchURL(t *testing.T) {
	other := newDocServer(t, "")
	d := newDocServer(t, other.srv.URL)
	ctx := context.Background()
	res, err := FetchURL(ctx, mustLink(t, d.srv.URL+"/ok/PLUGIN.md"), URLOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string][]byte{"PLUGIN.md": []byte(doc("u"))}, res.Files)
	assert.NotEmpty(t, res.ETag)
	assert.Equal(t, "Thu, 01 Jan 2026 00:00:00 GMT", res.LastModified)

	// Unchanged: 304, nothing transferred.
	changed, r2, err := CheckURL(ctx, mustLink(t, d.srv.URL+"/ok/PLUGIN.md"), res.ETag, res.LastModified, URLOptions{})
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Nil(t, r2)
	// Changed: the new body and validators.
	d.body.Store(doc("u2"))
	changed, r2, err = CheckURL(ctx, mustLink(t, d.srv.URL+"/ok/PLUGIN.md"), res.ETag, "", URLOptions{})
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, doc("u2"), string(r2.Files["PLUGIN.md"]))
	assert.NotEqual(t, res.ETag, r2.ETag)

	res, err = FetchURL(ctx, mustLink(t, d.srv.URL+"/same/PLUGIN.md"), URLOptions{})
	require.NoError(t, err)
	assert.Equal(t, d.srv.URL+"/ok/PLUGIN.md", res.URL)

	for path, want := range map[string]string{
		"/html/PLUGIN.md":        "an HTML page",
		"/big/PLUGIN.md":         "2097152 bytes, more than the 1048576 allowed",
		"/chunked-big/PLUGIN.md": "more than the 1048576 bytes allowed",
		"/other/PLUGIN.md":       "redirect refused: from the loopback origin",
		"/private/PLUGIN.md":     "redirect refused",
		"/missing/PLUGIN.md":     "404 Not Found",
	} {
		before := other.requests.Load()
		_, err := FetchURL(ctx, mustLink(t, d.srv.URL+path), URLOptions{})
		require.Error(t, err, path)
		assert.Contains(t, err.Error(), want, path)
		assert.Equal(t, before, other.requests.Load(), "the other origin is never reached")
	}
	_, err = FetchURL(ctx, mustLink(t, d.srv.URL+"/slow/PLUGIN.md"), URLOptions{Limits: Limits{Deadline: 200 * time.Millisecond}})
	assert.ErrorIs(t, err, ErrLimit)
	assert.ErrorContains(t, err, "no answer within 200ms")
}
