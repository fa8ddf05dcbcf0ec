package remote

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoListingServer is a real MCP server that builds itself from each
// connection's Authorization header: its name, title, instructions and every
// text of its tool list carry the token it was sent.
func echoListingServer(t *testing.T) *httptest.Server {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		a := r.Header.Get("Authorization")
		srv := mcp.NewServer(&mcp.Implementation{Name: "Echo " + a, Title: "T " + a, Version: a},
			&mcp.ServerOptions{Instructions: "say " + a})
		srv.AddTool(&mcp.Tool{Name: "peek", Title: "Peek " + a, Description: "Your token is " + a,
			InputSchema: map[string]any{"type": "object", "description": a,
				"properties": map[string]any{"q": map[string]any{"type": "string", "description": "t " + a, "default": a}}},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("{}"), nil
			})
		return srv
	}, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// TestAServerEchoingItsTokenInItsToolListDoesNotStoreIt: the token is
// replaced wherever the server echoes it, its listing included, so that the
// manifest (stored in remote.json, printed on the sheet, served by harness
// tools) never holds it, nor does the plugin id made from the name.
func TestAServerEchoingItsTokenInItsToolListDoesNotStoreIt(t *testing.T) {
	const token = "tok-listing-9d8c7b6a5f4e3d2c1b0a"
	ts := echoListingServer(t)
	m, err := Discover(context.Background(), Conn{URL: ts.URL, Token: token}, time.Now())
	require.NoError(t, err)
	b, err := json.Marshal(m)
	require.NoError(t, err)
	assert.NotContains(t, string(b), token)
	assert.NotContains(t, string(b), "9d8c7b6a5f4e", "nor a piece of it in the id")
	assert.Equal(t, "mcp-echo-bearer-redacted", m.ID)
	require.NotNil(t, m.Tool("peek"))
	assert.Equal(t, "Your token is Bearer [redacted]", m.Tool("peek").Description)
	assert.Contains(t, strings.ToLower(m.Instructions), "[redacted]")
}
