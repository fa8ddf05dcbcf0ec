package registry_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoreCannotBeTurnedOff: the reference's core: true marks a plugin that
// cannot be turned off. The native settings plugin is core (every native
// plugin is); a bundled
// official document saying core: true is core; a community or
// installed-by-link document saying it gets no effect: it can be turned
// off like any other.
func TestCoreCannotBeTurnedOff(t *testing.T) {
	ctx := context.Background()
	s, err := fetch.OpenStore(t.TempDir())
	require.NoError(t, err)
	tools := map[string]string{"look": toolYAML("read")}
	install(t, s, docFiles("selfcore", "core: true\n", tools), "community", nil)
	install(t, s, docFiles("linkcore", "core: true\n", tools), "official", nil)
	bundled := []registry.Bundle{{Files: docFiles("memory", "core: true\n", tools)}, {Files: docFiles("plain", "", tools)}}
	r, err := registry.OpenHome(ctx, s, bundled)
	require.NoError(t, err)
	require.Empty(t, r.Problems())
	_, err = r.AddNative(registry.SettingsPlugin, registry.SettingsTools(r)...)
	require.NoError(t, err)

	for _, id := range []string{"settings", "memory"} {
		d, _ := r.Document(id)
		assert.True(t, d.Core, id)
		err := r.SetEnabled(id, false)
		require.Error(t, err, id)
		assert.Equal(t, id+" is a core plugin and cannot be disabled", err.Error())
		on, err := r.Enabled(id)
		require.NoError(t, err)
		assert.True(t, on, id)
	}
	assert.True(t, r.Decide(registry.Call{Tool: "memory.look", Actor: registry.Agent}).Allow)

	for _, id := range []string{"selfcore", "linkcore", "plain"} {
		d, _ := r.Document(id)
		assert.False(t, d.Core, id)
		require.NoError(t, r.SetEnabled(id, false), id)
	}
	dec := r.Decide(registry.Call{Tool: "selfcore.look", Actor: registry.User})
	assert.False(t, dec.Allow)
	assert.Equal(t, registry.ReasonDisabled, dec.Reason, "a community core: true has no effect")
	c, err := r.Catalogue(registry.CatalogueOptions{})
	require.NoError(t, err)
	var hidden []string
	for _, h := range c.Hidden {
		if h.Reason == registry.ReasonDisabled {
			hidden = append(hidden, h.ID)
		}
	}
	assert.ElementsMatch(t, []string{"selfcore", "linkcore", "plain"}, hidden)
}

// TestDataSourceMapTTLMs: a data source in the reference's map form runs
// its tool with args and lives for ttlMs milliseconds.
func TestDataSourceMapTTLMs(t *testing.T) {
	var fetches atomic.Int32
	clk := &fakeClock{t: time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)}
	r := registry.New(registry.WithClock(clk.Now), registry.WithCompiler(func(p *manifest.Plugin) (registry.Runner, error) {
		return registry.RunnerFunc(func(ctx context.Context, req registry.RunRequest) (any, error) {
			return map[string]any{"fetch": fetches.Add(1), "q": req.Input["q"]}, nil
		}), nil
	}))
	mustAdd(t, r, docFiles("canteen", "dataSources:\n  crowd: {title: 人数, tool: crowd, args: {q: main}, ttlMs: 90000}\n",
		map[string]string{"crowd": toolYAML("read")}), registry.Official, registry.DocOptions{})
	read := func() map[string]any {
		env, err := r.ReadSource(context.Background(), "canteen.crowd")
		require.NoError(t, err)
		return env.Data.(map[string]any)
	}
	assert.Equal(t, map[string]any{"fetch": int32(1), "q": "main"}, read())
	clk.Add(89 * time.Second)
	assert.Equal(t, int32(1), read()["fetch"], "within 90000 ms: the cached value")
	clk.Add(2 * time.Second)
	assert.Equal(t, int32(2), read()["fetch"], "after 90000 ms: fetched again")
}

// TestCatalogueIconAndMaxAgentSteps: the catalogue (harness tools --json)
// shows a document's icon and maxAgentSteps, which grant nothing: the
// tools and their modes are those of the same document without them.
func TestCatalogueIconAndMaxAgentSteps(t *testing.T) {
	r := registry.New()
	mustAdd(t, r, docFiles("steps", "icon: mic\nmaxAgentSteps: 12\n", effectTools()), registry.Community, registry.DocOptions{})
	mustAdd(t, r, docFiles("plain", "", effectTools()), registry.Community, registry.DocOptions{})
	c, err := r.Catalogue(registry.CatalogueOptions{})
	require.NoError(t, err)
	require.Len(t, c.Plugins, 2)
	plain, steps := c.Plugins[0], c.Plugins[1]
	require.Equal(t, "steps", steps.ID)
	assert.Equal(t, "mic", steps.Icon)
	assert.Equal(t, 12, steps.MaxAgentSteps)
	assert.Zero(t, plain.MaxAgentSteps)
	require.Len(t, steps.Tools, len(plain.Tools))
	for i := range steps.Tools {
		assert.Equal(t, plain.Tools[i].Mode, steps.Tools[i].Mode, steps.Tools[i].Name)
	}
}
