package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An answer may hold any number of JSON token fields, and the scan reads
// each: every value is looked for in what the step sent (so that the
// step's own values are never registered), so an echo of a large request
// body as many distinct token fields cost the size of the answer times
// the size of the step's text (4 MiB of fields against a 1 MiB body: tens
// of seconds a request). Like the meta refreshes, navigations and forms,
// the distinct token field values of one answer are bounded: an answer
// with more than 1024 is refused with a fixed message, never read in
// part, and the campus's ticket after them never reaches the step.
func TestHandoffFieldsAreBounded(t *testing.T) {
	const ticket = "TICKETaaaaaaaaaaaaaaaaaaaaaaaa01"
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "application/json")
		var b strings.Builder
		b.WriteString(`{"records":[`)
		for i := 0; i < n; i++ {
			// The step's own values, echoed (never registered).
			fmt.Fprintf(&b, `{"token":"stepvalue%08d"},`, i)
		}
		fmt.Fprintf(&b, `{"token":%q}]}`, ticket)
		w.Write([]byte(b.String()))
	})
	cat := Catalogue{"portal": &Service{Name: "portal", Origin: srv.URL, Auth: Auth{Cookies: []string{"SESSION"}}}}
	require.NoError(t, cat.Validate())
	ks := MemKeystore(Secrets{"portal": {Cookies: map[string]string{"SESSION": "0123456789abcdef0123456789abcdef"}}})
	for _, n := range []int{0, 1, 1023, 1024, 1025, 5000} {
		var sent strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sent, "stepvalue%08d\n", i)
		}
		call := New(Config{Catalogue: cat, Keystore: ks}).NewCall("d", access("portal"))
		resp, err := call.Do(context.Background(), &Request{Service: "portal", Method: "POST", Path: "/list",
			Query: map[string][]string{"n": {strconv.Itoa(n)}}, Body: []byte(sent.String()), ContentType: "text/plain"})
		if n+1 > maxHandoffCandidates {
			require.Error(t, err, "n=%d", n)
			assert.True(t, errors.Is(err, ErrLimit), "n=%d: %v", n, err)
			assert.Equal(t, `over a proxy limit: campus service "portal" answered with more than 1024 token, ticket or JWT fields; the proxy reads every hand-off of an answer before a step sees it, and refuses an answer with more`, err.Error())
			continue
		}
		require.NoError(t, err, "n=%d", n)
		body := string(resp.Body)
		assert.NotContains(t, body, ticket, "n=%d", n)
		assert.Equal(t, n, strings.Count(body, "stepvalue"), "n=%d: the step's own values stay readable", n)
	}
}
