package remote

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAServerThatHoldsTheSessionsEndDoesNotHoldTheCall: the server answers
// the call at once but never answers the request that ends the session
// (DELETE). The call returns its result without waiting out the timeout.
func TestAServerThatHoldsTheSessionsEndDoesNotHoldTheCall(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "holder", Version: "1"}, nil)
	rawTool(srv, &mcp.Tool{Name: "quick", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult(`{"ok":true}`), nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	defer close(release)
	start := time.Now()
	d, err := Call(context.Background(), Conn{URL: ts.URL, Limits: Limits{Timeout: 6 * time.Second}}, "quick", nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"ok": true}, d)
	assert.Less(t, time.Since(start), 3*time.Second, "the session's end is not waited out")
}
