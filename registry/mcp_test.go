package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/manifest"
	official "github.com/pkuinfo/harness/plugins-official"
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

// TestMCPAnnotationsAreHonest: destructive only where declared, open world
// only for tools with request steps, idempotent for reads and where
// declared; effect, mode and trust in the tool's _meta and untrusted in the
// result's _meta.
func TestMCPAnnotationsAreHonest(t *testing.T) {
	r := registry.New(registry.WithCompiler(echoCompiler))
	f := docFiles("svc", "", map[string]string{
		"look":   toolYAML("read"),
		"add":    toolYAML("write"),
		"cancel": toolYAML("write", "destructive: true\nidempotent: true"),
	})
	// a tool that reaches the network, inside a nested step
	f["tools/fetch.yaml"] = []byte("description: Fetches.\neffect: read\nsteps:\n  - foreach: '[1]'\n    do:\n      - request: {service: portal, path: /x}\n  - return: '.'\n")
	f["PLUGIN.md"] = []byte(strings.Replace(string(f["PLUGIN.md"]), "version: 1.0.0\n", "version: 1.0.0\naccess:\n  campus: [portal]\n", 1))
	mustAdd(t, r, f, registry.Community, registry.DocOptions{})
	cs := connect(t, r, registry.MCPOptions{}, nil)
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	got := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		got[tl.Name] = tl
	}
	require.Len(t, got, 4, keys(got))
	type hints struct{ ro, destructive, idempotent, open bool }
	hint := func(n string) hints {
		a := got[n].Annotations
		require.NotNil(t, a, n)
		require.NotNil(t, a.DestructiveHint, n)
		require.NotNil(t, a.OpenWorldHint, n)
		return hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
	}
	assert.Equal(t, hints{ro: true, idempotent: true}, hint("svc__look"), "a kv-free local read")
	assert.Equal(t, hints{}, hint("svc__add"), "an additive write is not destructive")
	assert.Equal(t, hints{destructive: true, idempotent: true}, hint("svc__cancel"))
	assert.Equal(t, hints{ro: true, idempotent: true, open: true}, hint("svc__fetch"))
	assert.Equal(t, mcp.Meta{"pku-harness/effect": "write", "pku-harness/mode": "ask", "pku-harness/untrusted": true}, got["svc__add"].Meta)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "svc__look", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(t, res))
	assert.Equal(t, true, res.Meta["pku-harness/untrusted"])
	assert.Contains(t, text(t, res), `"untrusted":true`, "the envelope stays")
}

// TestMCPOfficialShuttleHints: the bundled shuttle's cancelBooking is the
// destructive one, its booking is not.
func TestMCPOfficialShuttleHints(t *testing.T) {
	all, err := official.Files()
	require.NoError(t, err)
	r := registry.New(registry.WithCapabilities(manifest.KnownRequires...))
	mustAdd(t, r, all["shuttle"], registry.Official, registry.DocOptions{Origin: registry.Bundled})
	cancel, ok := r.Lookup("shuttle.cancelBooking")
	require.True(t, ok)
	assert.Equal(t, registry.Hints{Destructive: true, Idempotent: true, OpenWorld: true}, cancel.Hints())
	book, ok := r.Lookup("shuttle.book")
	require.True(t, ok)
	assert.Equal(t, registry.Hints{OpenWorld: true}, book.Hints())
}

// TestMCPURLOnlyElicitationIsRefusedWithAHint: a client that can show only
// URL-mode elicitations is not sent a form; the refusal is a tool error that
// says how to allow the call.
func TestMCPURLOnlyElicitationIsRefusedWithAHint(t *testing.T) {
	r := mcpRegistry(t)
	asked := 0
	cs := connect(t, r, registry.MCPOptions{}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "com__write", Arguments: map[string]any{}})
	require.NoError(t, err, "a tool error, not a JSON-RPC error with code 0")
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "refused (no_approver)")
	assert.Contains(t, text(t, res), "a community plugin's write tools always ask: use an MCP client that supports elicitation (form mode)")
	assert.Zero(t, asked)
}

func TestAllowHint(t *testing.T) {
	r := registry.New(registry.WithCompiler(echoCompiler))
	mustAdd(t, r, docFiles("com", "", effectTools()), registry.Community, registry.DocOptions{})
	mustAdd(t, r, docFiles("ask", "", map[string]string{"w": toolYAML("write", "alwaysAsk: true")}), registry.Official, registry.DocOptions{})
	require.NoError(t, r.SetMode("com", manifest.Write, manifest.Off))
	hint := func(tool string, tainted bool) string {
		d := r.Authorize(context.Background(), registry.Call{Tool: tool, Actor: registry.Agent, Tainted: tainted}, nil)
		require.False(t, d.Allow, tool)
		return registry.AllowHint(d, registry.RunAsker)
	}
	assert.Equal(t, "run `harness modes com write ask` to allow it after asking", hint("com.write", false))
	require.NoError(t, r.SetMode("com", manifest.Write, ""))
	assert.Equal(t, "a community plugin's write tools always ask: pass --approve", hint("com.write", false))
	assert.Equal(t, "a community plugin's money tools always ask: pass --approve", hint("com.money", false))
	assert.Equal(t, "ask.w asks before every call whatever the mode: pass --approve", hint("ask.w", false))
	mustAdd(t, r, docFiles("off", "", effectTools()), registry.Official, registry.DocOptions{})
	require.NoError(t, r.SetMode("off", manifest.Write, manifest.Auto))
	assert.Contains(t, hint("off.write", true), "this session read untrusted data")
	require.NoError(t, r.SetMode("com", manifest.Read, manifest.Off))
	assert.Equal(t, "run `harness modes com read auto` to allow it (or `harness modes com read ask` to have it ask first)", hint("com.read", false))
}

func TestDestructiveReadIsRefused(t *testing.T) {
	r := registry.New(registry.WithCompiler(echoCompiler))
	_, err := r.AddFiles(docFiles("bad", "", map[string]string{"r": toolYAML("read", "destructive: true")}), registry.Community, registry.DocOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a read tool cannot be destructive")
}

// TestMCPApprovalIsBoundToItsSession: a state issued to one session is
// declined in another session of the same server.
func TestMCPApprovalIsBoundToItsSession(t *testing.T) {
	svc, err := mcpRegistry(t).MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	ctx := context.Background()
	open := func() *mcp.ClientSession {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := svc.Server().Connect(ctx, st, nil)
		require.NoError(t, err)
		t.Cleanup(func() { ss.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
		}).Connect(ctx, ct, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := open(), open()
	first, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "com__write", Arguments: map[string]any{"q": "z"}})
	require.NoError(t, err)
	require.NotEmpty(t, first.RequestState)
	yes := mcp.InputResponseMap{"approve": &mcp.ElicitResult{Action: "accept"}}
	res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "com__write", Arguments: map[string]any{"q": "z"}, InputResponses: yes, RequestState: first.RequestState})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "declined")
	res, err = a.CallTool(ctx, &mcp.CallToolParams{Name: "com__write", Arguments: map[string]any{"q": "z"}, InputResponses: yes, RequestState: first.RequestState})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
}
