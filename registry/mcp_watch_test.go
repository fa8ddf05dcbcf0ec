package registry_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPListChangedFollowsTheHome: a change of a watched file reopens the
// registry; the session hears tools/list_changed and the new tool is served
// and callable without a restart; a removal and a mode set to off take
// tools away the same way.
func TestMCPListChangedFollowsTheHome(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	require.NoError(t, os.WriteFile(state, []byte(`{"v":1}`), 0o600))

	var mu sync.Mutex
	withNew, newOff := false, false
	build := func(context.Context) (*registry.Registry, error) {
		mu.Lock()
		defer mu.Unlock()
		r := registry.New(registry.WithCompiler(echoCompiler))
		mustAdd(t, r, docFiles("old", "", map[string]string{"read": toolYAML("read")}), registry.Official, registry.DocOptions{})
		if withNew {
			mustAdd(t, r, docFiles("fresh", "", map[string]string{"read": toolYAML("read")}), registry.Official, registry.DocOptions{})
			if newOff {
				require.NoError(t, r.SetMode("fresh", manifest.Read, manifest.Off))
			}
		}
		return r, nil
	}
	r0, _ := build(context.Background())
	svc, err := r0.MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go svc.Watch(ctx, registry.WatchOptions{Paths: []string{state, filepath.Join(dir, "permissions.json")}, Every: 20 * time.Millisecond, Reopen: build})

	changed := make(chan struct{}, 10)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := svc.Server().Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()

	names := func() []string {
		list, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		var out []string
		for _, tl := range list.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("no tools/list_changed after %s", what)
		}
	}
	assert.Equal(t, []string{"old__read"}, names())
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fresh__read", Arguments: map[string]any{}})
	if err == nil {
		assert.True(t, res.IsError, "not served yet")
	}

	// an install, by another process: same size, new content
	mu.Lock()
	withNew = true
	mu.Unlock()
	require.NoError(t, os.WriteFile(state, []byte(`{"v":2}`), 0o600))
	wait("an install")
	assert.Equal(t, []string{"fresh__read", "old__read"}, names())
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fresh__read", Arguments: map[string]any{"q": "x"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))

	// a mode set to off in permissions.json hides the tool
	mu.Lock()
	newOff = true
	mu.Unlock()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "permissions.json"), []byte(`{}`), 0o600))
	wait("a mode change")
	assert.Equal(t, []string{"old__read"}, names())

	// a removal
	mu.Lock()
	withNew, newOff = false, false
	mu.Unlock()
	require.NoError(t, os.WriteFile(state, []byte(`{"v":3}`), 0o600))
	select {
	case <-changed:
		t.Fatal("nothing the client sees changed, so nothing is sent")
	case <-time.After(300 * time.Millisecond):
	}
	assert.Equal(t, []string{"old__read"}, names())
}

// TestMCPWatchKeepsToolsWhenTheHomeCannotBeRead: a reopen that fails keeps
// the tools served and is reported.
func TestMCPWatchKeepsToolsWhenTheHomeCannotBeRead(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	r := registry.New(registry.WithCompiler(echoCompiler))
	mustAdd(t, r, docFiles("old", "", map[string]string{"read": toolYAML("read")}), registry.Official, registry.DocOptions{})
	svc, err := r.MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 10)
	go svc.Watch(ctx, registry.WatchOptions{Paths: []string{state}, Every: 20 * time.Millisecond,
		Reopen:  func(context.Context) (*registry.Registry, error) { return nil, os.ErrPermission },
		OnError: func(err error) { errs <- err }})
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, os.WriteFile(state, []byte(`{}`), 0o600))
	select {
	case err := <-errs:
		assert.Contains(t, err.Error(), "the tools served stay as they were")
	case <-time.After(10 * time.Second):
		t.Fatal("no error reported")
	}
	assert.Same(t, r, svc.Registry())
}
