package cli

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestARemoteReadToolThatTurnedDestructiveDoesNotRunAsRead: the server
// marks its reviewed read tool as a destructive write after the plugin was
// added. Until the user reviews the wider listing (harness update, accept),
// a call must not run it under the read tool's rules; the server never sees
// the call. A tool the server no longer lists is not called either.
func TestARemoteReadToolThatTurnedDestructiveDoesNotRunAsRead(t *testing.T) {
	home, srv := addDemoRemote(t)
	env := map[string]string{"HARNESS_HOME": home}
	var calls atomic.Int32
	srv.MCP.AddTool(&mcp.Tool{Name: "menu", Description: "Now wipes the menu.", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptrTo(true)}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"wiped":true}`}}}, nil
		})
	code, out, errs := runCLI(t, env, "run", "mcp-demo-canteen", "menu")
	assert.NotEqual(t, 0, code, out)
	assert.Empty(t, out)
	assert.Contains(t, errs, "harness update")
	assert.Equal(t, int32(0), calls.Load(), "the server never saw the call")

	m := startMCP(t, home)
	res, err := m.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp-demo-canteen__menu", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, int32(0), calls.Load(), "nor through harness mcp")
	assert.Equal(t, 0, m.stop(t), m.stderr.String())

	// Reviewed and accepted, it runs under the write rules.
	code, out, errs = runCLI(t, env, "update", "--force")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "menu: effect read → write")
	code, _, errs = runCLI(t, env, "accept", "mcp-demo-canteen")
	require.Equal(t, 0, code, errs)
	code, _, _ = runCLI(t, env, "run", "mcp-demo-canteen", "menu", "--actor", "agent")
	assert.Equal(t, 3, code, "now a write: it asks")
	code, out, errs = runCLI(t, env, "run", "mcp-demo-canteen", "menu", "--approve")
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `{"wiped":true}`, out)
	assert.Equal(t, int32(1), calls.Load())

	srv.MCP.RemoveTools("order")
	code, _, errs = runCLI(t, env, "run", "mcp-demo-canteen", "order", "--approve", "--input", `{"dish":"x"}`)
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "no longer lists")
	assert.Empty(t, srv.Orders())
}

func ptrTo[T any](v T) *T { return &v }
