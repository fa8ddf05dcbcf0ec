package remote

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThousandsOfToolsAreBounded: a server listing 300 tools is added
// with the first 128 (by name) and says so; one listing 3000 is refused in
// one bounded call; neither costs more than the connection's bounds.
func TestThousandsOfToolsAreBounded(t *testing.T) {
	serve := func(n int) *testServer {
		return newTestServer(t, fmt.Sprintf("many %d", n), func(s *mcp.Server) {
			for i := range n {
				rawTool(s, &mcp.Tool{Name: fmt.Sprintf("t%04d", i), InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
					func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return textResult("{}"), nil
					})
			}
		})
	}
	m, err := Discover(context.Background(), Conn{URL: serve(300).URL}, time.Now())
	require.NoError(t, err)
	assert.Len(t, m.Tools, MaxTools)
	assert.Equal(t, "t0000", m.Tools[0].Name)
	assert.Contains(t, m.Skipped, fmt.Sprintf("tools past the first %d", MaxTools))

	start := time.Now()
	_, err = Discover(context.Background(), Conn{URL: serve(3000).URL, Limits: Limits{Timeout: 10 * time.Second}}, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 512 tools")
	assert.Less(t, time.Since(start), 10*time.Second)
}
