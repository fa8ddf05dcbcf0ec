package proxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A body without a usable Content-Type is sniffed, and a sniffer reads
// magic numbers at its start: "ID3" is audio, "BM" an image, "fLaC",
// "wOF2", "GIF89a" ... A page that shows the step's text right before the
// session (a greeting, a search term) therefore let the step test the
// session's first characters: with "ID" before it, the body was binary
// (dropped) exactly when the session starts with "3". What the step sees
// is the same for two sessions of one shape.
func TestSniffingDoesNotReadTheCredential(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("SESSION")
		if ct := r.URL.Query().Get("ct"); ct != "" {
			w.Header().Set("Content-Type", ct)
		} else {
			w.Header()["Content-Type"] = nil // no type: the client sniffs
		}
		w.Write([]byte(r.URL.Query().Get("q") + c.Value + "\n"))
	})
	observe := func(session string) string {
		cat := Catalogue{"portal": &Service{Name: "portal", Origin: srv.URL, Auth: Auth{Cookies: []string{"SESSION"}}}}
		require.NoError(t, cat.Validate())
		ks := MemKeystore(Secrets{"portal": {Cookies: map[string]string{"SESSION": session}}})
		call := New(Config{Catalogue: cat, Keystore: ks}).NewCall("d", access("portal"))
		var b strings.Builder
		for _, q := range []string{"ID", "B", "fLa", "wOF", "GIF8", "%PDF", "ttc", "OTT", "<?xm", "\xfe"} {
			for _, ct := range []string{"", "application/octet-stream"} {
				resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/echo",
					Query: map[string][]string{"q": {q}, "ct": {ct}}})
				if err != nil {
					fmt.Fprintf(&b, "%q %q: error %v\n", q, ct, err)
					continue
				}
				fmt.Fprintf(&b, "%q %q: %d binary=%v type=%s body=%q\n", q, ct, resp.Status, resp.Binary, resp.MediaType, resp.Body)
			}
		}
		return strings.ReplaceAll(b.String(), session, "<SESSION>")
	}
	// Two sessions of one shape (32 characters of [0-9A-Za-z]), each
	// starting with what one of the magic numbers above needs next.
	tail := "1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
	base := observe("x" + tail)
	for _, first := range []string{"3", "M", "C", "2", "F", "7", "9", "f", "O", "l"} {
		assert.Equal(t, base, observe(first+tail), "a session starting with %q", first)
	}
}
