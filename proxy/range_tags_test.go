package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rangedPage serves a page that shows the portal session, as net/http
// serves content (http.ServeContent: byte ranges, HEAD, conditional
// requests), with a hash of the whole page as its ETag (Spring's
// ShallowEtagHeaderFilter, Rack::ETag).
func rangedPage(w http.ResponseWriter, r *http.Request) {
	c, _ := r.Cookie("SESSION")
	page := "session="
	if c != nil {
		page += c.Value
	}
	sum := sha256.Sum256([]byte(page))
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	if strings.HasSuffix(r.URL.Path, ".bin") {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00" + page))
		return
	}
	http.ServeContent(w, r, "", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), strings.NewReader(page))
}

// A campus request may not ask for a byte range: a page that shows a
// session whole (and so is redacted whole) would give a step the session
// a piece at a time, none of which the redactor could know, and the step
// joins them. Refused before anything is sent, in any spelling; a web
// request, which carries no session, may.
func TestCampusRequestsTakeNoRange(t *testing.T) {
	srv := newRecorder(t, rangedPage)
	cat := Catalogue{"portal": &Service{Name: "portal", Origin: srv.URL, Auth: Auth{Cookies: []string{"SESSION"}}}}
	require.NoError(t, cat.Validate())
	port := srv.port()
	p := New(Config{Catalogue: cat, Keystore: MemKeystore(testSecrets()),
		Resolve: map[string]string{"web.example:" + strconv.Itoa(port): "127.0.0.1"}})
	a := access("portal")
	a.Web = append(a.Web, webOrigin("http", "web.example", port))
	call := p.NewCall("d", a)
	for _, h := range []http.Header{
		{"Range": {"bytes=8-15"}},
		{"range": {"bytes=16-"}},
		{"If-Range": {`"x"`}},
		{"If_Range": {`"x"`}, "Accept": {"text/plain"}},
	} {
		_, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/page", Header: h})
		require.Error(t, err, "%v", h)
		assert.True(t, errors.Is(err, ErrRefused), "%v: %v", h, err)
		assert.Contains(t, err.Error(), "a campus request may not ask for a part of a page")
	}
	assert.Empty(t, srv.Hits(), "nothing was sent")

	// The whole page is redacted whole.
	resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/page"})
	require.NoError(t, err)
	assert.Equal(t, "session="+Marker, string(resp.Body))

	// A web request takes a range.
	resp, err = call.Do(context.Background(), &Request{URL: "http://web.example:" + strconv.Itoa(port) + "/page",
		Header: http.Header{"Range": {"bytes=0-6"}}})
	require.NoError(t, err)
	assert.Equal(t, http.StatusPartialContent, resp.Status)
	assert.Equal(t, "session", string(resp.Body))
	assert.Equal(t, "bytes 0-6/8", resp.Header.Get("Content-Range"))
}

// The tags of the server's representation (ETag, Content-Range) pass only
// beside a text body the step sees with nothing redacted from it. A HEAD
// or a 304 has no body to judge and a binary body is not shown, while the
// tag may be a hash of a page that holds the session: a value that
// depends on the session's bytes.
func TestRepresentationTagsNeedABodyTheStepSees(t *testing.T) {
	srv := newRecorder(t, rangedPage)
	cat := Catalogue{"portal": &Service{Name: "portal", Origin: srv.URL, Auth: Auth{Cookies: []string{"SESSION"}}}}
	require.NoError(t, cat.Validate())
	call := New(Config{Catalogue: cat, Keystore: MemKeystore(testSecrets())}).NewCall("d", access("portal"))
	for _, r := range []*Request{
		{Service: "portal", Path: "/page", Method: "HEAD"},
		{Service: "portal", Path: "/page", Header: http.Header{"If-Modified-Since": {"Fri, 02 Jan 2026 00:00:00 GMT"}}},
		{Service: "portal", Path: "/page.bin"},
		{Service: "portal", Path: "/page"},
	} {
		resp, err := call.Do(context.Background(), r)
		require.NoError(t, err, "%s %s", r.Method, r.Path)
		assert.Empty(t, resp.Header.Values("Etag"), "%s %s (%d): %v", r.Method, r.Path, resp.Status, resp.Header)
		assertNoSecret(t, "header", strings.Join(resp.Header.Values("Etag"), " "))
	}
	// Beside a text body nothing was redacted from, the tag passes.
	plain := newRecorder(t, rangedPage)
	cat = Catalogue{"portal": &Service{Name: "portal", Origin: plain.URL}}
	require.NoError(t, cat.Validate())
	resp, err := New(Config{Catalogue: cat}).NewCall("d", access("portal")).Do(context.Background(), &Request{Service: "portal", Path: "/page"})
	require.NoError(t, err)
	assert.Equal(t, "session=", string(resp.Body))
	assert.NotEmpty(t, resp.Header.Get("ETag"))
}
