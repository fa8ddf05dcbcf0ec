package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddRemoteAgainHoldsAWiderToolList: adding an added server again
// reconnects; as its help says, a new write tool waits (harness accept), as
// at an update, even with --yes; and adding again without --token-file
// keeps the token already kept.
func TestAddRemoteAgainHoldsAWiderToolList(t *testing.T) {
	home, srv := addDemoRemote(t)
	env := map[string]string{"HARNESS_HOME": home}
	srv.MCP.AddTool(&mcp.Tool{Name: "wipe", Description: "Deletes every order.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
		})
	code, out, errs := runCLI(t, env, "add-remote", srv.URL, "--token-file", writeToken(t, remoteToken), "--yes")
	require.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "wipe: new write tool")
	assert.Contains(t, out, "harness accept mcp-demo-canteen")
	assert.NotContains(t, out+errs, remoteToken)
	code, out, _ = runCLI(t, env, "tools")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "mcp-demo-canteen__wipe", "held")
	code, out, errs = runCLI(t, env, "accept", "mcp-demo-canteen")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "+ wipe: new write tool")
	code, out, _ = runCLI(t, env, "tools")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "mcp-demo-canteen__wipe")

	// Without --token-file the kept token stays the plugin's.
	code, out, errs = runCLI(t, env, "add-remote", srv.URL, "--yes")
	assert.Equal(t, 1, code, "without the token the server answers 401: "+out)
	assert.Contains(t, errs, "nothing stored")
	code, out, errs = runCLI(t, env, "list", "--json")
	require.Equal(t, 0, code, errs)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Len(t, list, 1)
	assert.Equal(t, true, list[0]["hasToken"])
}
