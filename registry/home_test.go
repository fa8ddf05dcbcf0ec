package registry_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func install(t *testing.T, s *fetch.Store, files manifest.Files, trust string, modes map[string]string) {
	t.Helper()
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), l.Error())
	require.NoError(t, s.Install(context.Background(), fetch.Entry{ID: p.ID, Link: "/tmp/" + p.ID, Kind: fetch.KindLocal,
		Trust: trust, Enabled: true, Modes: modes}, files, false))
}

func TestOpenHome(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	s, err := fetch.OpenStore(home)
	require.NoError(t, err)
	all, err := official.Files()
	require.NoError(t, err)
	var bundled []registry.Bundle
	for _, id := range official.Names {
		bundled = append(bundled, registry.Bundle{Files: all[id], Core: id == "wallet"})
	}
	// a community document claiming a core official id, a community one
	// replacing a bundled one by the user's choice, a newer official
	// canteen, and a plain community one with a per-tool mode entry
	install(t, s, docFiles("wallet", "", effectTools()), "community", nil)
	install(t, s, docFiles("grades", "", effectTools()), "community", nil)
	install(t, s, docFiles("canteen", "", map[string]string{"crowd": toolYAML("read")}), "official", nil)
	install(t, s, docFiles("notes", "", effectTools()), "community", map[string]string{"write": "off", "notes.read": "ask"})

	r, err := registry.OpenHome(ctx, s, bundled)
	require.NoError(t, err)
	d, ok := r.Document("wallet")
	require.True(t, ok)
	assert.Equal(t, registry.Bundled, d.Origin, "the core bundled wallet stays")
	assert.Equal(t, registry.Official, d.Trust)
	require.Len(t, r.Problems(), 1)
	assert.ErrorIs(t, r.Problems()[0], registry.ErrConflict)
	d, ok = r.Document("grades")
	require.True(t, ok)
	assert.Equal(t, registry.Installed, d.Origin, "the installed grades replaces the bundled one")
	assert.Equal(t, registry.Community, d.Trust, "and keeps its own trust")
	d, _ = r.Document("canteen")
	assert.Equal(t, registry.Installed, d.Origin, "an installed official release replaces the bundled one")
	assert.Len(t, d.Tools, 1)
	d, _ = r.Document("wallet")
	assert.True(t, d.Core)

	// modes of an installed plugin live in state.json
	m, _ := r.Mode("notes", manifest.Write)
	assert.Equal(t, manifest.Off, m)
	require.Error(t, r.SetMode("notes", manifest.Write, manifest.Auto), "a community document's writes always ask")
	require.NoError(t, r.SetMode("notes", manifest.Write, manifest.Ask))
	require.NoError(t, r.SetEnabled("notes", false))
	st, err := s.Load()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"write": "ask", "notes.read": "ask"}, st.Plugins["notes"].Modes)
	assert.False(t, st.Plugins["notes"].Enabled)
	// and of a bundled one in permissions.json
	require.NoError(t, r.SetMode("classrooms", manifest.Read, manifest.Ask))
	require.Error(t, r.SetEnabled("wallet", false))
	b, err := os.ReadFile(filepath.Join(home, "permissions.json"))
	require.NoError(t, err)
	var pf map[string]map[string]registry.PluginSettings
	require.NoError(t, json.Unmarshal(b, &pf))
	assert.Equal(t, manifest.Ask, pf["plugins"]["classrooms"].Modes[manifest.Read])

	// a new registry over the same home sees it all
	r2, err := registry.OpenHome(ctx, s, bundled)
	require.NoError(t, err)
	m, _ = r2.Mode("classrooms", manifest.Read)
	assert.Equal(t, manifest.Ask, m)
	on, _ := r2.Enabled("notes")
	assert.False(t, on)
	assert.Equal(t, registry.ReasonDisabled, r2.Decide(registry.Call{Tool: "notes.read"}).Reason)

	// a plugin whose stored files changed is left out with a problem
	e := st.Plugins["notes"]
	dir, err := fetch.HashDir(e.Hash)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(home, fetch.StoreDir, dir, "PLUGIN.md"), []byte("tampered"), 0o644))
	r3, err := registry.OpenHome(ctx, s, bundled)
	require.NoError(t, err)
	_, ok = r3.Document("notes")
	assert.False(t, ok)
	assert.Len(t, r3.Problems(), 2)
}

func TestHomeStoreLimits(t *testing.T) {
	dir := t.TempDir()
	h := &registry.HomeStore{Dir: dir}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "permissions.json"), []byte("{not json"), 0o600))
	_, err := h.Settings()
	assert.ErrorContains(t, err, "not valid")
	big := make([]byte, 2<<20)
	for i := range big {
		big[i] = ' '
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "permissions.json"), big, 0o600))
	_, err = h.Settings()
	assert.ErrorContains(t, err, "larger than")
	_, err = h.Prefs("../escape")
	assert.Error(t, err)
	assert.Error(t, h.SetPrefs("A", nil))
	// no temp files are left behind
	require.NoError(t, h.SetPrefs("ok", map[string]any{"a": 1}))
	entries, _ := os.ReadDir(filepath.Join(dir, "prefs"))
	require.Len(t, entries, 1)
	assert.Equal(t, "ok.json", entries[0].Name())
}

// TestCheckInstall: a document is admitted only when the home would load
// it, and it pushes out no installed document that loads today.
func TestCheckInstall(t *testing.T) {
	ctx := context.Background()
	s, err := fetch.OpenStore(t.TempDir())
	require.NoError(t, err)
	all, err := official.Files()
	require.NoError(t, err)
	var bundled []registry.Bundle
	for _, id := range official.Names {
		bundled = append(bundled, registry.Bundle{Files: all[id], Core: id == "wallet"})
	}
	install(t, s, docFiles("notes", "legacy:\n  ids: [old-notes]\n", nil), "community", nil)
	parse := func(files manifest.Files) *manifest.Plugin {
		p, l := manifest.Parse(files)
		require.False(t, l.HasErrors(), l.Error())
		return p
	}
	for _, tc := range []struct {
		what  string
		files manifest.Files
		trust registry.Trust
		ok    bool
	}{
		{"a new id", docFiles("fresh", "", nil), registry.Community, true},
		{"a new version of an installed id", docFiles("notes", "legacy:\n  ids: [old-notes]\n", nil), registry.Community, true},
		{"a community document with a core bundled id", docFiles("wallet", "", nil), registry.Community, false},
		{"an official release of a core bundled id", docFiles("wallet", "", nil), registry.Official, true},
		{"a community document replacing a bundled one", docFiles("canteen", "", nil), registry.Community, true},
		// a legacy id never hides a plugin that has the id: both install
		{"a bundled id as a legacy id", docFiles("fresh", "legacy:\n  ids: [wallet]\n", nil), registry.Community, true},
		{"another document's legacy id", docFiles("old-notes", "", nil), registry.Community, true},
		{"an installed id as a legacy id (sorted first)", docFiles("aaa", "legacy:\n  ids: [notes]\n", nil), registry.Community, true},
		{"an installed id as a legacy id (sorted last)", docFiles("zzz", "legacy:\n  ids: [notes]\n", nil), registry.Community, true},
		{"another document's legacy id as a legacy id", docFiles("twin", "legacy:\n  ids: [old-notes]\n", nil), registry.Community, false},
	} {
		err := registry.CheckInstall(ctx, s, bundled, parse(tc.files), tc.trust)
		if tc.ok {
			assert.NoError(t, err, tc.what)
		} else {
			assert.ErrorIs(t, err, registry.ErrConflict, tc.what)
		}
	}
}

// The bundled copy is the floor of the official releases: an installed
// official document older than the bundled one of its id is left out (the
// bundled copy is used, with no problem), one of the same or a newer
// version replaces it; a bundled copy the host took from an update of a
// link outside the official repository has community trust.
func TestOpenHomeBundledFloorAndTrust(t *testing.T) {
	ctx := context.Background()
	versioned := func(id, v string, tools map[string]string) manifest.Files {
		f := docFiles(id, "", tools)
		f["PLUGIN.md"] = []byte(strings.Replace(string(f["PLUGIN.md"]), "version: 1.0.0", "version: "+v, 1))
		return f
	}
	one := map[string]string{"one": toolYAML("read")}
	two := map[string]string{"one": toolYAML("read"), "two": toolYAML("read")}
	bundled := []registry.Bundle{
		{Files: versioned("older", "1.2.0", one)},
		{Files: versioned("newer", "1.2.0", one)},
		{Files: versioned("other", "1.0.0", one), Trust: registry.Community},
	}
	s, err := fetch.OpenStore(t.TempDir())
	require.NoError(t, err)
	install(t, s, versioned("older", "1.1.0", two), "official", nil)
	install(t, s, versioned("newer", "1.2.0", two), "official", nil)

	r, err := registry.OpenHome(ctx, s, bundled)
	require.NoError(t, err)
	require.Empty(t, r.Problems())
	d, ok := r.Document("older")
	require.True(t, ok)
	assert.Equal(t, registry.Bundled, d.Origin, "the installed 1.1.0 is older than the bundled 1.2.0")
	assert.Len(t, d.Tools, 1)
	d, _ = r.Document("newer")
	assert.Equal(t, registry.Installed, d.Origin, "the same version installed replaces the bundled one")
	assert.Len(t, d.Tools, 2)
	d, _ = r.Document("other")
	assert.Equal(t, registry.Bundled, d.Origin)
	assert.Equal(t, registry.Community, d.Trust)
}
