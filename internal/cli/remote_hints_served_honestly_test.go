package cli

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/internal/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPServesRemoteToolsWithTheirServersHints: harness mcp tells its
// clients what the remote server said of a tool, never less: a tool the
// server marks destructive is served destructive, and every remote tool
// reaches the network (an MCP server elsewhere) unless its server says it
// is closed-world.
func TestMCPServesRemoteToolsWithTheirServersHints(t *testing.T) {
	srv := mcptest.Canteen(t, "", func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "wipe", Description: "Deletes every order.", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptrTo(true), IdempotentHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
			})
		s.AddTool(&mcp.Tool{Name: "local", Description: "Closed world.", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptrTo(false)}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
			})
	})
	home := t.TempDir()
	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "add-remote", srv.URL, "--yes")
	require.Equal(t, 0, code, out+errs)
	m := startMCP(t, home)
	res, err := m.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	got := map[string]*mcp.ToolAnnotations{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl.Annotations
	}
	wipe := got["mcp-demo-canteen__wipe"]
	require.NotNil(t, wipe)
	assert.False(t, wipe.ReadOnlyHint)
	require.NotNil(t, wipe.DestructiveHint)
	assert.True(t, *wipe.DestructiveHint, "the server said destructive")
	assert.True(t, wipe.IdempotentHint)
	require.NotNil(t, wipe.OpenWorldHint)
	assert.True(t, *wipe.OpenWorldHint, "a remote tool reaches its server")
	menu := got["mcp-demo-canteen__menu"]
	require.NotNil(t, menu)
	assert.True(t, menu.ReadOnlyHint)
	assert.True(t, *menu.OpenWorldHint)
	local := got["mcp-demo-canteen__local"]
	require.NotNil(t, local)
	assert.False(t, *local.OpenWorldHint, "the server said closed-world")
	assert.Equal(t, 0, m.stop(t), m.stderr.String())
}
