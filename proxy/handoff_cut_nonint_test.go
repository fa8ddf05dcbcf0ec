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

// A page's script navigates to a URL that holds the step's text right
// before the session ("/next?token=" + what the step asked for + the
// session). The hand-off search reads such a URL; were it to take a cut
// of it (a window of so many characters), the value it registers would
// end inside the session, at a point the step chose by the length of its
// text: a start of the session, registered and redacted from then on,
// which the step tests one character at a time. What the step sees is
// the same for two sessions that differ from their first character on.
// The same holds for a header value (a Location) of any length.
func TestHandoffValuesAreNeverCutsOfACredential(t *testing.T) {
	const prefix = `http://card.example/next?token=`
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("SESSION")
		q := r.URL.Query().Get("q")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/script":
			fmt.Fprintf(w, `<html><script>location.href = "%s%s%s";</script></html>`, prefix, q, c.Value)
		case "/meta":
			fmt.Fprintf(w, `<html><head><meta http-equiv="refresh" content="0; url=%s%s%s"></head></html>`, prefix, q, c.Value)
		case "/form":
			fmt.Fprintf(w, `<form id=f action="%s"><input type=hidden name=token value="%s%s"></form><script>f.submit()</script>`, prefix, q, c.Value)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"token":"%s%s"}`, q, c.Value)
		case "/location":
			w.Header().Set("Location", prefix+q+c.Value)
			w.WriteHeader(http.StatusFound)
		case "/header":
			w.Header().Set("X-Next", prefix+q+c.Value)
		}
	})
	observe := func(session string) string {
		cat := Catalogue{"portal": &Service{Name: "portal", Origin: srv.URL, Auth: Auth{Cookies: []string{"SESSION"}}}}
		require.NoError(t, cat.Validate())
		ks := MemKeystore(Secrets{"portal": {Cookies: map[string]string{"SESSION": session}}})
		call := New(Config{Catalogue: cat, Keystore: ks}).NewCall("d", access("portal"))
		var b strings.Builder
		for _, path := range []string{"/script", "/meta", "/form", "/json", "/location", "/header"} {
			for _, n := range []int{1, 2, 3, 8, 100, 900, 1000 - len(prefix) - 1, 1000 - len(prefix) - 2, 1000 - len(prefix) - 8, 1024 - len(prefix) - 1, 2040, 4095, 8191, 16<<10 - len(prefix) - 1, 16<<10 - len(prefix) - 8, 16 << 10} {
				q := strings.Repeat("a", n)
				resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: path, Query: map[string][]string{"q": {q}}})
				if err != nil {
					fmt.Fprintf(&b, "%s %d: error %v\n", path, n, err)
					continue
				}
				fmt.Fprintf(&b, "%s %d: %d %q %q\n", path, n, resp.Status, resp.Body, resp.Header.Get("Location"))
				// What the step then writes and reads back: its text and
				// each guess of the session's next characters.
				for _, g := range []string{"3", "4", "33", "34", "43", "44", "3333333", "4444444", "33333333", "44444444"} {
					fmt.Fprintf(&b, "  %s -> %s\n", g, call.Redact(q+g))
				}
			}
		}
		return strings.ReplaceAll(b.String(), session, "<SESSION>")
	}
	tail := "ABCDEF0123456789ABCDEF012345678"
	a, z := observe("3333333333"+tail[10:]+"9"), observe("4444444444"+tail[10:]+"9")
	if !assert.Equal(t, a, z) {
		al, zl := strings.Split(a, "\n"), strings.Split(z, "\n")
		for i := range al {
			if i < len(zl) && al[i] != zl[i] {
				hdr := ""
				for j := i; j >= 0; j-- {
					if strings.HasPrefix(al[j], "/") {
						hdr = al[j]
						break
					}
				}
				t.Logf("first difference, line %d (%.120s):\n%.200s\n%.200s", i, hdr, al[i], zl[i])
				break
			}
		}
	}
}
