package registry_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const legacyFront = `legacy:
  ids: [old-cafe, cafe-v1]
  tools: { crowdNow: crowd, "cafe-v1.menu": dishes }
  widgets: { crowdCard: crowd }
preferences:
  - { name: campus, kind: enum, title: Campus, options: [yanyuan, changping], default: yanyuan }
  - { name: limit, kind: integer, title: How many, schema: { minimum: 1, maximum: 20 }, default: 5 }
contributes:
  widgets:
    - { key: crowd, title: Crowd }
`

func legacyDoc() manifest.Files {
	f := docFiles("canteen", legacyFront, map[string]string{
		"crowd": toolYAML("read"), "dishes": toolYAML("read"), "order": toolYAML("money"),
	})
	f["widgets/crowd.json"] = []byte(`{"type":"card"}`)
	return f
}

func TestLegacyLookup(t *testing.T) {
	r := registry.New()
	mustAdd(t, r, legacyDoc(), registry.Official, registry.DocOptions{})
	for name, want := range map[string]string{
		"canteen.crowd":     "canteen.crowd",
		"canteen__crowd":    "canteen.crowd",
		"old-cafe.crowd":    "canteen.crowd", // old plugin id, current tool
		"old-cafe__crowd":   "canteen.crowd",
		"old-cafe.crowdNow": "canteen.crowd", // old plugin id, old tool name
		"canteen.crowdNow":  "canteen.crowd", // current id, old tool name
		"cafe-v1.menu":      "canteen.dishes",
		"cafe-v1__menu":     "canteen.dishes",
	} {
		tl, ok := r.Lookup(name)
		if assert.True(t, ok, name) {
			assert.Equal(t, want, tl.ID, name)
		}
	}
	for _, name := range []string{"old-cafe.menu", "canteen.menu", "canteen", "", "x.crowd", "canteen..crowd"} {
		_, ok := r.Lookup(name)
		assert.False(t, ok, name)
	}
	p, k, ok := r.ResolveWidget("old-cafe", "crowdCard")
	assert.True(t, ok)
	assert.Equal(t, []string{"canteen", "crowd"}, []string{p, k})
	p, k, ok = r.ResolveWidget("canteen", "crowd")
	assert.True(t, ok)
	assert.Equal(t, []string{"canteen", "crowd"}, []string{p, k})
	_, _, ok = r.ResolveWidget("canteen", "nope")
	assert.False(t, ok)
	d, ok := r.Document("cafe-v1")
	require.True(t, ok)
	assert.Equal(t, "canteen", d.ID)
}

// TestLegacySettingsCarryOver: settings stored under old ids apply to the
// new id, the strictest mode per effect winning, and a change folds them in.
func TestLegacySettingsCarryOver(t *testing.T) {
	store := registry.NewMemoryStore()
	require.NoError(t, store.UpdateSettings("old-cafe", func(ps *registry.PluginSettings) {
		ps.Modes[manifest.Read] = manifest.Ask
		ps.Modes[manifest.Money] = manifest.Auto
	}))
	require.NoError(t, store.UpdateSettings("cafe-v1", func(ps *registry.PluginSettings) {
		ps.Modes[manifest.Read] = manifest.Auto
		ps.Modes[manifest.Money] = manifest.Off
		ps.Disabled = true
	}))
	require.NoError(t, store.SetPrefs("old-cafe", map[string]any{"campus": "changping", "limit": 50.0}))
	r := registry.New(registry.WithStore(store))
	mustAdd(t, r, legacyDoc(), registry.Official, registry.DocOptions{})

	m, _ := r.Mode("canteen", manifest.Read)
	assert.Equal(t, manifest.Ask, m)
	m, _ = r.Mode("canteen", manifest.Money)
	assert.Equal(t, manifest.Off, m)
	m, _ = r.Mode("canteen", manifest.Write)
	assert.Equal(t, manifest.Ask, m, "unset stays the default")
	on, _ := r.Enabled("canteen")
	assert.False(t, on)
	assert.Equal(t, registry.ReasonDisabled, r.Decide(registry.Call{Tool: "old-cafe.crowd"}).Reason)

	// a change folds the legacy entries into the current id
	require.NoError(t, r.SetEnabled("canteen", true))
	all, _ := store.Settings()
	assert.Equal(t, registry.PluginSettings{Modes: map[manifest.Effect]manifest.Mode{"read": "ask", "money": "off"}}, all["canteen"])
	assert.Empty(t, all["old-cafe"].Modes)
	assert.False(t, all["cafe-v1"].Disabled)
	require.NoError(t, r.SetMode("canteen", manifest.Read, manifest.Auto))
	m, _ = r.Mode("canteen", manifest.Read)
	assert.Equal(t, manifest.Auto, m)

	// preferences: the old value carries over where it still fits
	s, err := r.Pref("canteen.campus")
	require.NoError(t, err)
	assert.Equal(t, "changping", s.Value)
	assert.True(t, s.IsSet)
	s, err = r.Pref("canteen.limit")
	require.NoError(t, err)
	assert.Equal(t, "5", fmt.Sprint(s.Value), "50 no longer fits: the default")
	assert.False(t, s.IsSet)
}

func TestIDConflicts(t *testing.T) {
	r := registry.New()
	mustAdd(t, r, legacyDoc(), registry.Official, registry.DocOptions{Origin: registry.Bundled})
	_, err := r.AddFiles(docFiles("canteen", "", effectTools()), registry.Community, registry.DocOptions{})
	assert.ErrorIs(t, err, registry.ErrConflict)
	_, err = r.AddFiles(docFiles("twin", "legacy: { ids: [old-cafe] }\n", effectTools()), registry.Community, registry.DocOptions{})
	assert.ErrorIs(t, err, registry.ErrConflict, "two documents cannot list one legacy id")
	_, err = r.AddFiles(docFiles("self", "legacy: { ids: [self] }\n", effectTools()), registry.Community, registry.DocOptions{})
	assert.ErrorContains(t, err, "its own id")
	_, err = r.AddFiles(manifest.Files{"PLUGIN.md": []byte("no front matter")}, registry.Community, registry.DocOptions{})
	assert.ErrorContains(t, err, "invalid")
	assert.Len(t, r.Problems(), 4)
	// the refused ones left nothing behind
	tl, ok := r.Lookup("canteen.crowd")
	require.True(t, ok)
	assert.Equal(t, registry.Official, tl.Document().Trust)
	_, ok = r.Lookup("twin.read")
	assert.False(t, ok)
	assert.Len(t, r.Documents(), 1)
}

// TestLegacyNeverHidesAnInstalledPlugin: the reference: "If a plugin with
// an old id is actually installed, the host uses that plugin; the legacy
// mapping never hides it." Both install, whichever comes first; the old id
// reaches the old plugin; the new one takes neither its settings nor its
// preferences, and a change of the new one leaves the old one's alone.
func TestLegacyNeverHidesAnInstalledPlugin(t *testing.T) {
	for _, oldFirst := range []bool{true, false} {
		store := registry.NewMemoryStore()
		r := registry.New(registry.WithStore(store))
		old := docFiles("old-cafe", "", map[string]string{"crowd": toolYAML("read"), "pay": toolYAML("write")})
		if oldFirst {
			mustAdd(t, r, old, registry.Community, registry.DocOptions{})
		}
		mustAdd(t, r, legacyDoc(), registry.Community, registry.DocOptions{})
		if !oldFirst {
			mustAdd(t, r, old, registry.Community, registry.DocOptions{})
		}
		assert.Empty(t, r.Problems())
		for name, want := range map[string]string{
			"old-cafe.crowd": "old-cafe.crowd", "old-cafe__pay": "old-cafe.pay", "canteen.crowd": "canteen.crowd",
			"cafe-v1.menu": "canteen.dishes", // a legacy id nobody has still maps
		} {
			tl, ok := r.Lookup(name)
			if assert.True(t, ok, name) {
				assert.Equal(t, want, tl.ID, name)
			}
		}
		d, ok := r.Document("old-cafe")
		require.True(t, ok)
		assert.Equal(t, "old-cafe", d.ID)

		require.NoError(t, r.SetEnabled("old-cafe", false))
		m, err := r.Mode("canteen", manifest.Read)
		require.NoError(t, err)
		assert.Equal(t, manifest.Auto, m)
		assert.NotEqual(t, registry.ReasonDisabled, r.Decide(registry.Call{Tool: "canteen.crowd", Input: map[string]any{}}).Reason,
			"the old plugin's settings are its own")
		require.NoError(t, r.SetMode("canteen", manifest.Read, manifest.Ask))
		all, err := store.Settings()
		require.NoError(t, err)
		assert.True(t, all["old-cafe"].Disabled, "a change of the new plugin does not clear the old one's settings")
	}
}

// TestLegacyWidgetKeys: legacy.widgets keys are "<old plugin>.<widget>",
// as the reference writes them; the bare old key still resolves.
func TestLegacyWidgetKeys(t *testing.T) {
	r := registry.New()
	f := legacyDoc()
	f["PLUGIN.md"] = []byte(strings.Replace(string(f["PLUGIN.md"]), "widgets: { crowdCard: crowd }", `widgets: { crowdCard: crowd, "old-cafe.busy": crowd }`, 1))
	mustAdd(t, r, f, registry.Official, registry.DocOptions{})
	p, k, ok := r.ResolveWidget("old-cafe", "busy")
	require.True(t, ok)
	assert.Equal(t, []string{"canteen", "crowd"}, []string{p, k})
	_, _, ok = r.ResolveWidget("cafe-v1", "busy")
	assert.False(t, ok, "the key names its old plugin")
}

func TestPreferences(t *testing.T) {
	dir := t.TempDir()
	r := registry.New(registry.WithStore(&registry.HomeStore{Dir: dir}), registry.WithCompiler(echoCompiler))
	mustAdd(t, r, legacyDoc(), registry.Official, registry.DocOptions{})
	list, err := r.Preferences()
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "canteen.campus", list[0].Key)
	assert.Equal(t, "yanyuan", list[0].Value)
	assert.Equal(t, "canteen.limit", list[1].Key)

	require.NoError(t, r.SetPref("canteen.campus", "changping"))
	require.NoError(t, r.SetPref("old-cafe.limit", 7))
	err = r.SetPref("canteen.campus", "mars")
	assert.ErrorContains(t, err, "does not fit")
	assert.ErrorContains(t, r.SetPref("canteen.limit", 21), "maximum")
	assert.Error(t, r.SetPref("canteen.nope", 1))
	assert.Error(t, r.SetPref("canteen", 1))
	assert.Error(t, r.SetPref("nope.x", 1))

	// a fresh registry on the same home reads the values back
	r2 := registry.New(registry.WithStore(&registry.HomeStore{Dir: dir}), registry.WithCompiler(echoCompiler))
	mustAdd(t, r2, legacyDoc(), registry.Official, registry.DocOptions{})
	env, err := r2.Invoke(t.Context(), registry.Call{Tool: "canteen.crowd"}, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"campus": "changping", "limit": 7.0}, env.Data.(map[string]any)["prefs"])
	// back to the default
	require.NoError(t, r2.SetPref("canteen.limit", nil))
	s, _ := r2.Pref("canteen.limit")
	assert.False(t, s.IsSet)
}

func TestSettingsTools(t *testing.T) {
	r := registry.New()
	mustAdd(t, r, legacyDoc(), registry.Official, registry.DocOptions{})
	_, err := r.AddNative(registry.SettingsPlugin, registry.SettingsTools(r)...)
	require.NoError(t, err)
	ctx := t.Context()
	env, err := r.Invoke(ctx, registry.Call{Tool: "settings__list", Actor: registry.Agent, Input: map[string]any{"plugin": "canteen"}}, nil)
	require.NoError(t, err)
	assert.Len(t, env.Data, 2)
	// setting is a write: the agent is asked first
	call := registry.Call{Tool: "settings__set", Actor: registry.Agent, Input: map[string]any{"key": "canteen.campus", "value": "changping"}}
	assert.Equal(t, registry.ReasonModeAsk, r.Decide(call).Reason)
	env, err = r.Invoke(ctx, call, registry.ApproveAll)
	require.NoError(t, err)
	assert.Equal(t, "changping", env.Data.(registry.Setting).Value)
	_, err = r.Invoke(ctx, registry.Call{Tool: "settings__set", Input: map[string]any{"key": "canteen.campus", "value": "mars"}}, nil)
	assert.ErrorContains(t, err, "does not fit")
}

// A community document with the same id as an official one, or claiming it
// as a legacy id, reads none of the values the user set for the official
// one: they are kept apart (HOME/community/prefs/).
func TestPreferencesApartByTrust(t *testing.T) {
	dir := t.TempDir()
	r := registry.New(registry.WithStore(&registry.HomeStore{Dir: dir}), registry.WithCompiler(echoCompiler))
	mustAdd(t, r, legacyDoc(), registry.Official, registry.DocOptions{})
	require.NoError(t, r.SetPref("canteen.campus", "changping"))
	_, err := os.Stat(filepath.Join(dir, "prefs", "canteen.json"))
	require.NoError(t, err)

	// The same document, installed as community in another registry on the
	// same home: the default, not the official document's value.
	rc := registry.New(registry.WithStore(&registry.HomeStore{Dir: dir}), registry.WithCompiler(echoCompiler))
	mustAdd(t, rc, legacyDoc(), registry.Community, registry.DocOptions{})
	s, err := rc.Pref("canteen.campus")
	require.NoError(t, err)
	assert.False(t, s.IsSet, "a community document read an official one's preference")
	assert.Equal(t, "yanyuan", s.Value)
	require.NoError(t, rc.SetPref("canteen.campus", "changping"))
	_, err = os.Stat(filepath.Join(dir, "community", "prefs", "canteen.json"))
	require.NoError(t, err)

	// Values stored under a legacy id are carried over only within a trust.
	require.NoError(t, r.SetPref("canteen.limit", 9))
	require.NoError(t, os.Rename(filepath.Join(dir, "prefs", "canteen.json"), filepath.Join(dir, "prefs", "old-cafe.json")))
	rc2 := registry.New(registry.WithStore(&registry.HomeStore{Dir: dir}), registry.WithCompiler(echoCompiler))
	mustAdd(t, rc2, legacyDoc(), registry.Community, registry.DocOptions{})
	s, err = rc2.Pref("canteen.limit")
	require.NoError(t, err)
	assert.False(t, s.IsSet, "a community document read an official legacy id's preference")
	ro := registry.New(registry.WithStore(&registry.HomeStore{Dir: dir}), registry.WithCompiler(echoCompiler))
	mustAdd(t, ro, legacyDoc(), registry.Official, registry.DocOptions{})
	s, err = ro.Pref("canteen.limit")
	require.NoError(t, err)
	assert.True(t, s.IsSet)
	assert.Equal(t, 9.0, s.Value)
}
