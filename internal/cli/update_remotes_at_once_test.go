package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUpdateReconnectsRemotesAtOnce: three added servers that, once armed,
// answer only when all three have been reached: harness update --force
// finds each unchanged, which happens only if their reconnects run at once
// (one after another, the first waits out its whole timeout and fails), and
// prints them in the order of their ids.
func TestUpdateReconnectsRemotesAtOnce(t *testing.T) {
	var armed atomic.Bool
	var mu sync.Mutex
	seen := 0
	open := make(chan struct{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home}
	for _, name := range []string{"charlie", "alpha", "bravo"} {
		srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "list", Description: "Lists.", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "[]"}}}, nil
			})
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		var once sync.Once
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if armed.Load() {
				once.Do(func() {
					mu.Lock()
					defer mu.Unlock()
					if seen++; seen == 3 {
						close(open)
					}
				})
				select {
				case <-open:
				case <-r.Context().Done():
					return
				case <-release:
					return
				}
			}
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		code, out, errs := runCLI(t, env, "add-remote", ts.URL, "--yes")
		require.Equal(t, 0, code, out+errs)
	}
	armed.Store(true)
	code, out, errs := runCLI(t, env, "update", "--force")
	require.Equal(t, 0, code, errs)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "mcp-") {
			lines = append(lines, l)
		}
	}
	assert.Equal(t, []string{"mcp-alpha: unchanged", "mcp-bravo: unchanged", "mcp-charlie: unchanged"}, lines, out)
}
