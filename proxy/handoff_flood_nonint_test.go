package proxy

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A page echoes the step's text as a hand-off candidate (a meta refresh,
// a script's navigation, an auto-posting form, a hidden input) as many
// times as the step asks, and then hands the real ticket on in the same
// form. The step's own values are never registered, but each echo is a
// candidate the scan reads; had the scan stopped after so many (it read
// 64 meta refreshes and script navigations, 16 forms, 256 inputs a
// form), the ticket after them would never be registered and reach the
// step whole. Whatever the count, what the step sees is the same for two
// tickets, and never holds one.
func TestHandoffScanFailsClosedBeyondItsCap(t *testing.T) {
	var ticket string // the campus's ticket of the run
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("q")
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		b.WriteString("<html><body>")
		switch r.URL.Path {
		case "/meta":
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, `<meta http-equiv="refresh" content="0; url=/next?token=%s">`, q)
			}
			fmt.Fprintf(&b, `<meta http-equiv="refresh" content="0; url=/next?token=%s">`, ticket)
		case "/script":
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, `<script>location.href = "/next?token=%s";</script>`, q)
			}
			fmt.Fprintf(&b, `<script>location.href = "/next?token=%s";</script>`, ticket)
		case "/form":
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, `<form action="/next?token=%s"></form>`, q)
			}
			fmt.Fprintf(&b, `<form id=f action="/next?token=%s"></form><script>f.submit()</script>`, ticket)
		case "/input":
			b.WriteString(`<form id=f action="/next">`)
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, `<input type=hidden name=token value="%s">`, q)
			}
			fmt.Fprintf(&b, `<input type=hidden name=token value="%s"></form><script>f.submit()</script>`, ticket)
		}
		b.WriteString("</body></html>")
		w.Write([]byte(b.String()))
	})
	observe := func(tk string) string {
		ticket = tk
		cat := Catalogue{"portal": &Service{Name: "portal", Origin: srv.URL, Auth: Auth{Cookies: []string{"SESSION"}}}}
		require.NoError(t, cat.Validate())
		ks := MemKeystore(Secrets{"portal": {Cookies: map[string]string{"SESSION": "0123456789abcdef0123456789abcdef"}}})
		q := "stepstepstepstep0123" // ticket-shaped, the step's own
		var b strings.Builder
		for _, path := range []string{"/meta", "/script", "/form", "/input"} {
			for _, n := range []int{0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097} {
				// A proxy of its own per answer: a ticket registered once
				// stays registered.
				call := New(Config{Catalogue: cat, Keystore: ks}).NewCall("d", access("portal"))
				resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: path, Query: map[string][]string{"q": {q}, "n": {strconv.Itoa(n)}}})
				if err != nil {
					fmt.Fprintf(&b, "%s %d: error %v\n", path, n, err)
					continue
				}
				body := string(resp.Body)
				fmt.Fprintf(&b, "%s %d: %d %d echoes, %d markers, ends %q\n", path, n, resp.Status,
					strings.Count(body, q), strings.Count(body, Marker), body[max(0, len(body)-120):])
			}
		}
		return b.String()
	}
	a, z := observe("TICKETaaaaaaaaaaaaaaaaaaaaaaaa01"), observe("TICKETzzzzzzzzzzzzzzzzzzzzzzzz99")
	for _, tk := range []string{"TICKETaaaaaaaaaaaaaaaaaaaaaaaa01", "TICKETzzzzzzzzzzzzzzzzzzzzzzzz99"} {
		for _, o := range []string{a, z} {
			for _, line := range strings.Split(o, "\n") {
				assert.NotContains(t, line, tk)
			}
		}
	}
	if !assert.Equal(t, a, z) {
		al, zl := strings.Split(a, "\n"), strings.Split(z, "\n")
		for i := range al {
			if i < len(zl) && al[i] != zl[i] {
				t.Logf("first difference, line %d:\n%.300s\n%.300s", i, al[i], zl[i])
				break
			}
		}
	}
}
