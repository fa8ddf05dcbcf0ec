package registry_test

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const copilotFront = `preferences:
  screenshots: {title: 允许 AI 查看截图, kind: boolean, default: false}
  apps: {title: Apps, kind: list, options: [{value: taobao, label: 淘宝}, {value: wechat, label: 微信}], default: []}
  voice: {title: Voice, kind: choice, options: [{value: calm, label: 平静}, {value: bright, label: 明快}], default: calm}
`

// TestSettingsChange: the agent changes a preference with settings__change
// and the key <plugin>.<name>, as the reference says ("The agent can now
// change it with settings__change and the key copilot.screenshots");
// settings__set stays, listed beside it as its old name; settings__list
// gives each preference's kind and options.
func TestSettingsChange(t *testing.T) {
	dir := t.TempDir()
	r := registry.New(registry.WithStore(&registry.HomeStore{Dir: dir}), registry.WithCompiler(echoCompiler))
	mustAdd(t, r, docFiles("copilot", copilotFront, map[string]string{"look": toolYAML("read")}), registry.Official, registry.DocOptions{})
	_, err := r.AddNative(registry.SettingsPlugin, registry.SettingsTools(r)...)
	require.NoError(t, err)
	assert.Contains(t, registry.SettingsPlugin.Instructions, "settings__change")

	cat, err := r.Catalogue(registry.CatalogueOptions{})
	require.NoError(t, err)
	descs := map[string]string{}
	for _, p := range cat.Plugins {
		for _, tl := range p.Tools {
			descs[tl.Name] = tl.Description
		}
	}
	require.Contains(t, descs, "settings__change")
	require.Contains(t, descs, "settings__set")
	assert.True(t, strings.HasPrefix(descs["settings__set"], "The old name of settings__change"), descs["settings__set"])
	ch, ok := r.Lookup("settings__change")
	require.True(t, ok)
	assert.Equal(t, manifest.Write, ch.Effect)

	ctx := t.Context()
	call := registry.Call{Tool: "settings__change", Actor: registry.Agent, Input: map[string]any{"key": "copilot.screenshots", "value": true}}
	assert.Equal(t, registry.ReasonModeAsk, r.Decide(call).Reason, "a write: the agent asks first")
	env, err := r.Invoke(ctx, call, registry.ApproveAll)
	require.NoError(t, err)
	assert.Equal(t, true, env.Data.(registry.Setting).Value)

	_, err = r.Invoke(ctx, registry.Call{Tool: "settings__change", Input: map[string]any{"key": "copilot.apps", "value": []any{"wechat"}}}, nil)
	require.NoError(t, err)
	_, err = r.Invoke(ctx, registry.Call{Tool: "settings__change", Input: map[string]any{"key": "copilot.apps", "value": []any{"douyin"}}}, nil)
	assert.ErrorContains(t, err, "does not fit", "a list's items are its options' values")
	big := make([]any, 2000)
	for i := range big {
		big[i] = "wechat"
	}
	_, err = r.Invoke(ctx, registry.Call{Tool: "settings__change", Input: map[string]any{"key": "copilot.apps", "value": big}}, nil)
	assert.ErrorContains(t, err, "larger than 16384 bytes", "a value that fits the schema is still bounded")
	_, err = r.Invoke(ctx, registry.Call{Tool: "settings__set", Input: map[string]any{"key": "copilot.voice", "value": "bright"}}, nil)
	require.NoError(t, err, "the old name still changes it")
	_, err = r.Invoke(ctx, registry.Call{Tool: "settings__change", Input: map[string]any{"key": "copilot.voice", "value": "loud"}}, nil)
	assert.ErrorContains(t, err, "does not fit")

	env, err = r.Invoke(ctx, registry.Call{Tool: "settings__list", Actor: registry.Agent, Input: map[string]any{"plugin": "copilot"}}, nil)
	require.NoError(t, err)
	list := env.Data.([]registry.Setting)
	require.Len(t, list, 3)
	by := map[string]registry.Setting{}
	for _, s := range list {
		by[s.Key] = s
	}
	assert.Equal(t, "list", by["copilot.apps"].Kind)
	assert.Equal(t, []any{"wechat"}, by["copilot.apps"].Value)
	assert.Equal(t, []manifest.Option{{Value: "taobao", Label: "淘宝"}, {Value: "wechat", Label: "微信"}}, by["copilot.apps"].Options)
	assert.Equal(t, "choice", by["copilot.voice"].Kind)
	assert.Equal(t, "bright", by["copilot.voice"].Value)
	assert.Equal(t, "boolean", by["copilot.screenshots"].Kind)
	assert.Equal(t, true, by["copilot.screenshots"].Value)

	// what the steps read as $prefs
	env, err = r.Invoke(ctx, registry.Call{Tool: "copilot.look"}, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"screenshots": true, "apps": []any{"wechat"}, "voice": "bright"}, env.Data.(map[string]any)["prefs"])
}

// TestStoredPreferenceOfAnOldKind: a value stored while the preference was
// an integer (the old shuttle route) is listed, and read by steps, as its
// text once the preference is a choice of strings.
func TestStoredPreferenceOfAnOldKind(t *testing.T) {
	dir := t.TempDir()
	store := &registry.HomeStore{Dir: dir}
	require.NoError(t, store.SetPrefs("bus", map[string]any{"route": 4.0}))
	r := registry.New(registry.WithStore(store), registry.WithCompiler(echoCompiler))
	mustAdd(t, r, docFiles("bus", `preferences:
  route: {title: Route, kind: choice, options: [{value: "7", label: Seven}, {value: "4", label: Four}], default: "7"}
`, map[string]string{"show": toolYAML("read")}), registry.Official, registry.DocOptions{})
	s, err := r.Pref("bus.route")
	require.NoError(t, err)
	assert.Equal(t, "4", s.Value)
	assert.True(t, s.IsSet)
	env, err := r.Invoke(t.Context(), registry.Call{Tool: "bus.show"}, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"route": "4"}, env.Data.(map[string]any)["prefs"])
}
