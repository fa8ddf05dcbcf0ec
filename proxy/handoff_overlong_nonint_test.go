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

// A page hands the ticket on after the step's text in one candidate: a
// script's navigation ("/next?q=" + the step's text + "&token=" + the
// ticket) or a JSON hand-off field ("token": the step's text + the
// ticket). The step chooses the length; a scan that skipped a navigation
// longer than 8 KiB, or a field with no closing quote in 16 KiB, never
// registered the ticket, and the step read it whole. Whatever the length,
// what the step sees is the same for two tickets, and never holds one.
func TestHandoffScanRefusesOverlongCandidates(t *testing.T) {
	var ticket string
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		q := strings.Repeat("a", func() int { n, _ := strconv.Atoi(r.URL.Query().Get("n")); return n }())
		switch r.URL.Path {
		case "/script":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<script>location.href = "/next?q=%s&token=%s";</script>`, q, ticket)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"token":"%s%s"}`, q, ticket)
		case "/open":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"token":"%s%s`, q, ticket) // never closed
		}
	})
	observe := func(tk string) string {
		ticket = tk
		cat := Catalogue{"portal": &Service{Name: "portal", Origin: srv.URL, Auth: Auth{Cookies: []string{"SESSION"}}}}
		require.NoError(t, cat.Validate())
		ks := MemKeystore(Secrets{"portal": {Cookies: map[string]string{"SESSION": "0123456789abcdef0123456789abcdef"}}})
		var b strings.Builder
		for _, path := range []string{"/script", "/json", "/open"} {
			for _, n := range []int{0, 100, 8 << 10, 8<<10 + 1, 16 << 10, 16<<10 + 1, 64 << 10} {
				call := New(Config{Catalogue: cat, Keystore: ks}).NewCall("d", access("portal"))
				resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: path, Query: map[string][]string{"n": {strconv.Itoa(n)}}})
				if err != nil {
					fmt.Fprintf(&b, "%s %d: error %v\n", path, n, err)
					continue
				}
				body := string(resp.Body)
				fmt.Fprintf(&b, "%s %d: %d %d bytes, ends %q\n", path, n, resp.Status, len(body), body[max(0, len(body)-80):])
			}
		}
		return b.String()
	}
	const t1, t2 = "TICKETaaaaaaaaaaaaaaaaaaaaaaaa01", "TICKETzzzzzzzzzzzzzzzzzzzzzzzz99"
	a, z := observe(t1), observe(t2)
	for _, line := range strings.Split(a+z, "\n") {
		assert.NotContains(t, line, t1)
		assert.NotContains(t, line, t2)
	}
	assert.Equal(t, a, z)
}
