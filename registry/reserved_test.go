package registry_test

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A document stored by an older engine under a reserved id (the settings
// tools' id, as its id or a legacy id; a remote plugin's mcp- prefix) is
// refused when the home is opened: the host's native settings tools stay
// the only settings__list and settings__set.
func TestReservedIDsStoredState(t *testing.T) {
	for _, tc := range []struct{ name, id, front string }{
		{"id", "settings", ""},
		{"legacy id", "prefs", "legacy:\n  ids: [settings]\n"},
		{"remote prefix", "mcp-files", ""},
		{"remote prefix legacy", "files", "legacy:\n  ids: [mcp-files]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			s, err := fetch.OpenStore(home)
			require.NoError(t, err)
			files := docFiles(tc.id, tc.front, map[string]string{"set": toolYAML("read"), "list": toolYAML("read")})
			// Stored as an older engine stored it: straight into the store,
			// without today's checks.
			require.NoError(t, s.Install(context.Background(), fetch.Entry{ID: tc.id, Link: "/tmp/" + tc.id, Kind: fetch.KindLocal,
				Trust: "community", Enabled: true}, files, false))

			r, err := registry.OpenHome(context.Background(), s, nil)
			require.NoError(t, err)
			_, err = r.AddNative(registry.SettingsPlugin, registry.SettingsTools(r)...)
			require.NoError(t, err, "the native settings tools are added")
			require.NotEmpty(t, r.Problems(), "the stored document is refused and listed")
			assert.ErrorContains(t, r.Problems()[0], "reserved")
			if d, ok := r.Document(tc.id); ok {
				assert.Equal(t, registry.Native, d.Origin, "the stored document is not loaded")
			}

			d, ok := r.Document("settings")
			require.True(t, ok)
			assert.Equal(t, registry.Native, d.Origin)
			set, ok := r.Lookup("settings__set")
			require.True(t, ok)
			assert.Equal(t, registry.Native, set.Document().Origin)
			assert.Equal(t, manifest.Write, set.Effect, "settings__set is the native write tool, not a document's read")
			dec := r.Decide(registry.Call{Tool: "settings__set", Actor: registry.Agent, Input: map[string]any{"key": "x.y", "value": 1}})
			assert.Equal(t, registry.ReasonModeAsk, dec.Reason)

			cat, err := r.Catalogue(registry.CatalogueOptions{})
			require.NoError(t, err)
			for _, p := range cat.Plugins {
				if p.ID == "settings" {
					assert.Equal(t, registry.Official, p.Trust)
				}
				if p.ID == tc.id {
					assert.Equal(t, "settings", p.ID, "the reserved document is in the catalogue")
				}
			}
		})
	}
}

// AddDocument refuses a parsed document under a reserved id whatever made
// it (a host that builds documents itself), and a native plugin added after
// a document that holds its id takes the id back.
func TestReservedIDsAddDocument(t *testing.T) {
	files := docFiles("prefs", "", map[string]string{"set": toolYAML("read")})
	for _, id := range append(manifest.ReservedIDs(), "mcp-x") {
		p, l := manifest.Parse(files)
		require.False(t, l.HasErrors(), l.Error())
		p.ID = id
		r := registry.New()
		_, err := r.AddDocument(p, registry.Community, registry.DocOptions{})
		require.Error(t, err, id)
		assert.ErrorContains(t, err, "reserved", id)
		_, ok := r.Document(id)
		assert.False(t, ok)

		p, _ = manifest.Parse(files)
		p.Legacy.IDs = []string{id}
		_, err = registry.New().AddDocument(p, registry.Community, registry.DocOptions{})
		assert.ErrorContains(t, err, "reserved", id)
	}

	// An id the list does not know, taken by a document before the host
	// adds its native plugin of that id: the native plugin wins.
	r := registry.New()
	mustAdd(t, r, docFiles("clock", "", map[string]string{"now": toolYAML("read")}), registry.Community, registry.DocOptions{})
	mustAdd(t, r, docFiles("other", "legacy:\n  ids: [timer]\n", map[string]string{"now": toolYAML("read")}), registry.Community, registry.DocOptions{})
	_, err := r.AddNative(registry.NativePlugin{ID: "clock"}, clock{"2026-11-30 14:00"})
	require.NoError(t, err)
	_, err = r.AddNative(registry.NativePlugin{ID: "timer"}, clock{"2026-11-30 14:00"})
	require.NoError(t, err)
	for _, id := range []string{"clock", "timer"} {
		d, ok := r.Document(id)
		require.True(t, ok)
		assert.Equal(t, registry.Native, d.Origin, id)
	}
	_, ok := r.Document("other")
	assert.False(t, ok, "the document that claimed timer as a legacy id is dropped")
	_, ok = r.Lookup("other__now")
	assert.False(t, ok)
	_, ok = r.Lookup("clock__" + clock{}.Name())
	assert.True(t, ok)
	assert.Len(t, r.Problems(), 2, "each dropped document is listed")
}

// ForgetData deletes the stores steps.OpenKV and HomeStore write, in both
// trusts, and keeps the official ones when asked.
func TestForgetData(t *testing.T) {
	dir := t.TempDir()
	write := func(trust registry.Trust) {
		kv, err := steps.OpenKV(dir, "notes", trust == registry.Community, steps.DefaultLimits())
		require.NoError(t, err)
		require.NoError(t, kv.Set("k", "v"))
		require.NoError(t, (&registry.HomeStore{Dir: dir}).SetPrefs(registry.PrefsKey("notes", trust), map[string]any{"p": 1.0}))
	}
	stored := func(trust registry.Trust) (kv, prefs bool) {
		k, err := steps.OpenKV(dir, "notes", trust == registry.Community, steps.DefaultLimits())
		require.NoError(t, err)
		_, kv, err = k.Get("k")
		require.NoError(t, err)
		m, err := (&registry.HomeStore{Dir: dir}).Prefs(registry.PrefsKey("notes", trust))
		require.NoError(t, err)
		return kv, m != nil
	}
	write(registry.Community)
	write(registry.Official)
	f, err := registry.ForgetData(dir, "notes", true)
	require.NoError(t, err)
	assert.Equal(t, registry.Forgotten{KV: true, Preferences: true, KeptOfficial: true}, f)
	kv, prefs := stored(registry.Community)
	assert.False(t, kv || prefs)
	kv, prefs = stored(registry.Official)
	assert.True(t, kv && prefs, "the official data is kept")

	f, err = registry.ForgetData(dir, "notes", false)
	require.NoError(t, err)
	assert.Equal(t, []string{"kv", "preferences"}, f.What())
	kv, prefs = stored(registry.Official)
	assert.False(t, kv || prefs)
	f, err = registry.ForgetData(dir, "notes", false)
	require.NoError(t, err)
	assert.Empty(t, f.What())
	_, err = registry.ForgetData(dir, "../x", false)
	assert.Error(t, err)
}
