package remote

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestARedirectToAnotherOriginSendsItNothing: a server that answers its
// initialize with a redirect to another origin (another loopback port) has
// its redirect refused: the other origin never sees a request, so never the
// Authorization header, whatever the status code.
func TestARedirectToAnotherOriginSendsItNothing(t *testing.T) {
	const token = "tok-redirect-5e4d3c2b1a09f8e7"
	var seen atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
	defer other.Close()
	for _, code := range []int{301, 302, 303, 307, 308} {
		red := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/mcp", code)
		}))
		_, err := Discover(context.Background(), Conn{URL: red.URL, Token: token, Limits: Limits{Timeout: 5 * time.Second}}, time.Now())
		red.Close()
		require.Error(t, err, code)
		assert.Contains(t, err.Error(), "redirect", code)
		assert.NotContains(t, err.Error(), token)
	}
	assert.Equal(t, int32(0), seen.Load())

	// To private and link-local addresses: the decision is seen by a
	// transport that sends only to loopback, so no packet leaves even if
	// the redirect were followed.
	guard := &loopbackOnly{}
	for _, to := range []string{"http://10.1.2.3/mcp", "https://169.254.169.254/latest/meta-data/", "http://[fd00::1]:8080/mcp", "https://mcp.example.com/mcp"} {
		red := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to, http.StatusTemporaryRedirect)
		}))
		_, err := Discover(context.Background(), Conn{URL: red.URL, Token: token, HTTP: &http.Client{Transport: guard},
			Limits: Limits{Timeout: 5 * time.Second}}, time.Now())
		red.Close()
		require.Error(t, err, to)
		assert.Contains(t, err.Error(), "redirect", to)
	}
	assert.Empty(t, guard.elsewhere.Load(), "nothing was asked of another address")
}

// loopbackOnly sends requests to loopback hosts and records (never sends)
// any other.
type loopbackOnly struct{ elsewhere atomic.Value }

func (l *loopbackOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if h := r.URL.Hostname(); h != "127.0.0.1" && h != "::1" {
		l.elsewhere.Store(r.URL.String())
		return nil, fmt.Errorf("test transport: %s is not loopback", h)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestEndlessOrMalformedAnswersCostOneBoundedCall: an initialize answered
// by an SSE stream that never ends (pings, or one event that never
// closes), by JSON that is not JSON-RPC, or by an endless JSON body, ends
// in an error within the connection's bounds.
func TestEndlessOrMalformedAnswersCostOneBoundedCall(t *testing.T) {
	pings := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, ": ping\n\n"); err != nil {
				return
			}
			f.Flush()
			time.Sleep(5 * time.Millisecond)
		}
	}
	bigEvent := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: ")
		chunk := strings.Repeat("x", 32<<10)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}
	garbage := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":"nope","result":[1,2,`)
	}
	endlessJSON := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"`)
		chunk := strings.Repeat("y", 32<<10)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}
	for name, h := range map[string]http.HandlerFunc{"pings": pings, "big event": bigEvent, "garbage": garbage, "endless json": endlessJSON} {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(h)
			defer ts.Close()
			start := time.Now()
			_, err := Discover(context.Background(), Conn{URL: ts.URL, Limits: Limits{Timeout: 2 * time.Second, MaxBytes: 1 << 20}}, time.Now())
			require.Error(t, err)
			assert.Less(t, time.Since(start), 10*time.Second)
			assert.Less(t, len(err.Error()), 700, "the error is cut")
		})
	}
}
