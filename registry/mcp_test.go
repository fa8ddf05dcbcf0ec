package registry_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connect serves r over in-memory pipes and connects the SDK's client.
func connect(t *testing.T, r *registry.Registry, o registry.MCPOptions, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	srv, err := r.MCPServer(o)
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, copts).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok)
	return tc.Text
}

func mcpRegistry(t *testing.T) *registry.Registry {
	r := registry.New(registry.WithCompiler(echoCompiler))
	mustAdd(t, r, docFiles("com", "", map[string]string{
		"read": toolYAML("read"), "write": toolYAML("write"), "mine": toolYAML("read", "userOnly: true"),
	}), registry.Community, registry.DocOptions{})
	mustAdd(t, r, docFiles("off", "", map[string]string{"read": toolYAML("read"), "write": toolYAML("write")}), registry.Official, registry.DocOptions{})
	require.NoError(t, r.SetMode("off", manifest.Write, manifest.Auto))
	return r
}

func TestMCP(t *testing.T) {
	r := mcpRegistry(t)
	cs := connect(t, r, registry.MCPOptions{}, nil)
	ctx := context.Background()

	init := cs.InitializeResult()
	assert.Contains(t, init.Instructions, "## com plugin (com)")
	assert.Contains(t, init.Instructions, "Use com for tests.")

	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"com__read", "com__write", "off__read", "off__write"}, names)
	assert.True(t, list.Tools[0].Annotations.ReadOnlyHint)
	assert.Equal(t, "object", list.Tools[0].InputSchema.(map[string]any)["type"])

	// an official read: runs, trusted
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "off__read", Arguments: map[string]any{"q": "hi"}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(t, res))
	var env map[string]any
	require.NoError(t, json.Unmarshal([]byte(text(t, res)), &env))
	assert.Equal(t, false, env["untrusted"])
	assert.Equal(t, map[string]any{"plugin": "off", "tool": "read", "trust": "official"}, env["source"])
	assert.Equal(t, map[string]any{"q": "hi"}, env["data"].(map[string]any)["input"])

	// write auto in a clean session: runs
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "off__write", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))

	// a bad input names the field
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "off__read", Arguments: map[string]any{"q": 3}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "refused (bad_input)")
	assert.Contains(t, text(t, res), "/q")

	// a community write asks; this client cannot be asked
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "com__write", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "refused (no_approver)")
	assert.Contains(t, text(t, res), "nobody can be asked")

	// a community read taints the session: now the official write asks
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "com__read", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Contains(t, text(t, res), `"untrusted":true`)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "off__write", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "untrusted data")

	// userOnly tools are not served at all
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "com__mine", Arguments: map[string]any{}})
	if err == nil {
		assert.True(t, res.IsError)
	}

	// a second session starts clean
	cs2 := connect(t, r, registry.MCPOptions{}, nil)
	res, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "off__write", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
}

func TestMCPAsksThroughElicitation(t *testing.T) {
	r := mcpRegistry(t)
	var asked []string
	answer := "decline"
	cs := connect(t, r, registry.MCPOptions{}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: answer}, nil
		},
	})
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "com__write", Arguments: map[string]any{"q": "x"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "the user declined com.write")
	require.Len(t, asked, 1)
	assert.Contains(t, asked[0], `com.write`)
	assert.Contains(t, asked[0], `{"q":"x"}`)

	answer = "accept"
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "com__write", Arguments: map[string]any{"q": "x"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
	assert.Len(t, asked, 2)

	// with elicitation turned off, an ask is refused without asking
	cs2 := connect(t, r, registry.MCPOptions{NoElicit: true}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	res, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "com__write", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "refused (no_approver)")
	assert.Len(t, asked, 2)
}

// TestMCPApprovalIsBound: the signed request state binds the user's yes to
// one call with one input, once.
func TestMCPApprovalIsBound(t *testing.T) {
	r := mcpRegistry(t)
	cs := connect(t, r, registry.MCPOptions{}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	ctx := context.Background()
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "com__write", Arguments: map[string]any{"q": "a"}})
	require.NoError(t, err)
	require.Contains(t, first.InputRequests, "approve")
	require.NotEmpty(t, first.RequestState)
	yes := mcp.InputResponseMap{"approve": &mcp.ElicitResult{Action: "accept"}}
	retry := func(args map[string]any, state string) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "com__write", Arguments: args, InputResponses: yes, RequestState: state})
		require.NoError(t, err)
		return res
	}
	// another input under the same state: declined
	res := retry(map[string]any{"q": "b"}, first.RequestState)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "declined")
	// a forged state: declined
	res = retry(map[string]any{"q": "a"}, "1.AAAA")
	assert.True(t, res.IsError)
	// the real one: runs, once
	res = retry(map[string]any{"q": "a"}, first.RequestState)
	assert.False(t, res.IsError, text(t, res))
	res = retry(map[string]any{"q": "a"}, first.RequestState)
	assert.True(t, res.IsError, "a state is redeemed once")
}
