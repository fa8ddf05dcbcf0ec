package registry_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedteamMCPHeaderAnnotationDoesNotCrashTheServer: an input schema is
// the author's text; one whose property carries an x-mcp-header the SDK
// refuses made AddTool panic, so one community document took every tool
// (the official ones too) off the MCP server. Now that tool alone is left
// out, and the registry's problems say why.
func TestRedteamMCPHeaderAnnotationDoesNotCrashTheServer(t *testing.T) {
	r := registry.New(registry.WithCompiler(echoCompiler))
	mustAdd(t, r, docFiles("evil", "", map[string]string{
		"hdr":  "description: Looks.\neffect: read\ninput:\n  type: object\n  properties:\n    q: { type: object, x-mcp-header: X-Q }\n",
		"hdr2": "description: Looks.\neffect: read\ninput:\n  type: object\n  properties:\n    q: { type: string, x-mcp-header: \"bad header\" }\n",
		"fine": toolYAML("read"),
	}), registry.Community, registry.DocOptions{})
	mustAdd(t, r, docFiles("off", "", map[string]string{"read": toolYAML("read")}), registry.Official, registry.DocOptions{})

	cs := connect(t, r, registry.MCPOptions{}, nil)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"evil__fine", "off__read"}, names)
	var problems []string
	for _, p := range r.Problems() {
		problems = append(problems, p.Error())
	}
	require.Len(t, problems, 2)
	assert.Contains(t, problems[0]+problems[1], "evil.hdr is not served over MCP")
	assert.Contains(t, problems[0]+problems[1], "evil.hdr2 is not served over MCP")

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "off__read", Arguments: map[string]any{"q": "x"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
}

// gate is a native read tool that counts the calls running at once and
// waits for release.
type gate struct {
	running, most atomic.Int32
	release       chan struct{}
}

func (*gate) Name() string                { return "wait" }
func (*gate) Description() string         { return "Waits." }
func (*gate) Effect() manifest.Effect     { return manifest.Read }
func (*gate) InputSchema() map[string]any { return map[string]any{"type": "object"} }
func (g *gate) Run(ctx context.Context, _ map[string]any) (any, error) {
	n := g.running.Add(1)
	defer g.running.Add(-1)
	for {
		m := g.most.Load()
		if n <= m || g.most.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-g.release:
		return map[string]any{"ok": true}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// gatedServer serves the gate as host__wait with opts; open releases every
// call, and runs (once) before the session closes, so no call is left
// waiting.
func gatedServer(t *testing.T, opts registry.MCPOptions) (*gate, *mcp.ClientSession, func()) {
	t.Helper()
	g := &gate{release: make(chan struct{})}
	r := registry.New()
	_, err := r.AddNative(registry.NativePlugin{ID: "host"}, g)
	require.NoError(t, err)
	var once sync.Once
	open := func() { once.Do(func() { close(g.release) }) }
	cs := connect(t, r, opts, nil)
	t.Cleanup(open)
	return g, cs, open
}

// TestRedteamMCPCallsAreBounded: the SDK runs each request on its own
// goroutine, so a client (or a steered agent) sending many calls at once ran
// them all together. Now at most MaxCalls run; the rest wait, and a waiting
// call gives up when its request is cancelled.
func TestRedteamMCPCallsAreBounded(t *testing.T) {
	g, cs, open := gatedServer(t, registry.MCPOptions{MaxCalls: 2})
	ctx := context.Background()

	const calls = 6
	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, calls)
	errs := make([]error, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = cs.CallTool(ctx, &mcp.CallToolParams{Name: "host__wait", Arguments: map[string]any{}})
		}()
	}
	require.Eventually(t, func() bool { return g.running.Load() >= 2 }, 10*time.Second, 5*time.Millisecond)

	// a call waiting for a slot gives up when it is cancelled
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "host__wait", Arguments: map[string]any{}})
		done <- err
	}()
	cancel()
	require.Error(t, <-done)

	open()
	wg.Wait()
	for i := range calls {
		require.NoError(t, errs[i])
		assert.False(t, results[i].IsError, fmt.Sprint(results[i].Content))
	}
	assert.LessOrEqual(t, g.most.Load(), int32(2), "no more than MaxCalls calls ran at once")
}

// bombTool's input schema refers back to itself through two anyOf branches:
// validating a failing value costs 2^depth applications.
const bombTool = "description: Deep.\neffect: read\ninput:\n  type: object\n  properties:\n    a: { $ref: '#/$defs/n' }\n  $defs:\n    n: { anyOf: [ {type: array, items: {$ref: '#/$defs/n'}}, {type: array, items: {$ref: '#/$defs/n'}, minItems: 0}, {type: string} ] }\n"

// nested is depth arrays around 1.
func nested(depth int) any {
	var v any = 1.0
	for range depth {
		v = []any{v}
	}
	return v
}

// TestRedteamSchemaBombIsBounded: a document's schema and an input the
// agent writes made validation exponential (20 levels: 30 s, 5 GB). Decide
// now counts the work first and refuses as bad_input; an honest input to
// the same schema, and a deep input nesting past MaxInputDepth, are
// decided without running the validator away.
func TestRedteamSchemaBombIsBounded(t *testing.T) {
	r := registry.New(registry.WithCompiler(echoCompiler))
	mustAdd(t, r, docFiles("bomb", "", map[string]string{"deep": bombTool}), registry.Community, registry.DocOptions{})

	d := r.Decide(registry.Call{Tool: "bomb__deep", Actor: registry.Agent, Input: map[string]any{"a": nested(40)}})
	assert.Equal(t, registry.ReasonBadInput, d.Reason)
	assert.Contains(t, d.Message, "would take more than")

	d = r.Decide(registry.Call{Tool: "bomb__deep", Actor: registry.Agent, Input: map[string]any{"a": []any{[]any{"x"}, []any{}}}})
	assert.True(t, d.Allow, d.Message)

	d = r.Decide(registry.Call{Tool: "bomb__deep", Actor: registry.Agent, Input: map[string]any{"a": nested(manifest.MaxInputDepth + 5)}})
	assert.Equal(t, registry.ReasonBadInput, d.Reason)
	assert.Contains(t, d.Message, "deeper than")

	// over MCP: the same bound, as a tool error
	cs := connect(t, r, registry.MCPOptions{}, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bomb__deep", Arguments: map[string]any{"a": nested(30)}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "refused (bad_input)")
}

// TestRedteamMCPWaitingCallsAreBounded: calls beyond the running and
// waiting bounds are refused at once as busy instead of piling up.
func TestRedteamMCPWaitingCallsAreBounded(t *testing.T) {
	g, cs, open := gatedServer(t, registry.MCPOptions{MaxCalls: 1, MaxWaiting: 1})
	ctx := context.Background()

	results := make(chan *mcp.CallToolResult, 4)
	call := func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "host__wait", Arguments: map[string]any{}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		results <- res
	}
	go call()
	require.Eventually(t, func() bool { return g.running.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	for range 3 {
		go call()
	}
	// of the three, at most one may wait: two come back while the first
	// still runs
	for range 2 {
		select {
		case res := <-results:
			require.True(t, res.IsError)
			assert.Contains(t, text(t, res), "busy")
		case <-time.After(20 * time.Second):
			t.Fatal("calls beyond the bounds waited instead of being refused")
		}
	}
	open()
	for range 2 {
		res := <-results
		assert.False(t, res.IsError, fmt.Sprint(res.Content))
	}
}

// TestRedteamMCPCancelReachesTheTool: a client's notifications/cancelled
// ends a call whose tool would otherwise run on, and frees its slot.
func TestRedteamMCPCancelReachesTheTool(t *testing.T) {
	g, cs, open := gatedServer(t, registry.MCPOptions{MaxCalls: 1})

	cctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "host__wait", Arguments: map[string]any{}})
		done <- err
	}()
	require.Eventually(t, func() bool { return g.running.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.Error(t, <-done)
	require.Eventually(t, func() bool { return g.running.Load() == 0 }, 10*time.Second, 5*time.Millisecond, "the tool saw the cancellation")

	// the slot is free again: the next call runs
	open()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "host__wait", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.False(t, res.IsError, fmt.Sprint(res.Content))
}
