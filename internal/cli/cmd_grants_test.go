package cli

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// installForGrants stores a document with a write tool (its one step
// returns $grant: it sends nothing) under trust.
func installForGrants(t *testing.T, home, id, trust string) {
	t.Helper()
	files := manifest.Files{
		"PLUGIN.md":       []byte("---\nid: " + id + "\nname: N\ndescription: d\nversion: 1.0.0\n---\nI.\n"),
		"tools/send.yaml": []byte("description: Sends.\neffect: write\nsteps:\n  - return: '{grant: $grant}'\n"),
		"tools/pay.yaml":  []byte("description: Pays.\neffect: money\nsteps:\n  - return: '{grant: $grant}'\n"),
	}
	h, err := files.Hash()
	require.NoError(t, err)
	st, err := fetch.OpenStore(home)
	require.NoError(t, err)
	require.NoError(t, st.Install(context.Background(), fetch.Entry{ID: id, Version: "1.0.0", Link: "https://example.edu.cn/" + id + "/PLUGIN.md",
		Kind: fetch.KindURL, Hash: h, Trust: trust, Installed: time.Now(), Enabled: true}, files, false))
}

// TestRunApproveAlways: --approve=always on an installed official
// document's write keeps a standing grant: the next run without --approve
// runs (and $grant says always), list and grants show it, a tainted run
// still asks, revoke takes it back and the run asks again. --approve and
// --approve=true still answer once.
func TestRunApproveAlways(t *testing.T) {
	home := t.TempDir()
	installForGrants(t, home, "poster", fetch.TrustOfficial)
	run := func(args ...string) (int, string, string) {
		return runCLI(t, nil, append([]string{"--home", home, "run", "poster", "send", "--actor", "agent"}, args...)...)
	}
	code, _, errs := run()
	require.Equal(t, 3, code, errs)
	for _, once := range []string{"--approve", "--approve=true", "--approve=once"} {
		code, out, errs := run(once)
		require.Equal(t, 0, code, errs)
		assert.JSONEq(t, `{"grant":"once"}`, out, once)
	}
	code, _, _ = run()
	require.Equal(t, 3, code, "once keeps nothing")
	code, _, errs = run("--approve=nonsense")
	assert.Equal(t, 2, code, errs)
	code, _, errs = run("--approve", "always")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "write --approve=always, with =")

	code, out, errs := run("--approve=always")
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `{"grant":"always"}`, out)
	assert.Contains(t, errs, "harness revoke poster send")
	code, out, errs = run()
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `{"grant":"always"}`, out, "the second run goes unasked")
	code, _, errs = run("--tainted")
	assert.Equal(t, 3, code, "a tainted turn asks whatever was granted: %s", errs)
	code, _, _ = runCLI(t, nil, "--home", home, "run", "poster", "send", "--actor", "scheduler")
	assert.Equal(t, 3, code, "never the scheduler")

	code, out, _ = runCLI(t, nil, "--home", home, "list")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "standing grants")
	assert.Contains(t, out, "poster.send (write, since ")
	code, out, _ = runCLI(t, nil, "--home", home, "list", "--json")
	require.Equal(t, 0, code)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Len(t, list, 1)
	gs := list[0]["grants"].([]any)
	require.Len(t, gs, 1)
	assert.Equal(t, "send", gs[0].(map[string]any)["tool"])
	assert.NotContains(t, gs[0], "stale")

	code, out, _ = runCLI(t, nil, "--home", home, "grants", "--json")
	require.Equal(t, 0, code)
	var g struct {
		Grants []struct {
			Plugin, Tool string
			Applies      bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &g))
	require.Len(t, g.Grants, 1)
	assert.Equal(t, "poster", g.Grants[0].Plugin)
	assert.True(t, g.Grants[0].Applies)

	code, out, _ = runCLI(t, nil, "--home", home, "modes", "poster")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "standing grants (harness revoke poster TOOL")
	assert.Contains(t, out, "poster.send")

	code, out, _ = runCLI(t, nil, "--home", home, "revoke", "poster", "send")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "revoked 1")
	code, _, _ = run()
	assert.Equal(t, 3, code, "revoked: asks again")
	code, _, _ = runCLI(t, nil, "--home", home, "revoke", "poster", "send")
	assert.Equal(t, 1, code, "nothing left to revoke")
	code, out, _ = runCLI(t, nil, "--home", home, "grants")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "no standing grants")
}

// TestRunApproveAlwaysIsOnceWhereNoGrantMayBe: a money tool, a community
// document's write and a tainted turn take --approve=always as once, say
// so, and keep nothing; removing a plugin deletes its grants.
func TestRunApproveAlwaysIsOnceWhereNoGrantMayBe(t *testing.T) {
	home := t.TempDir()
	installForGrants(t, home, "poster", fetch.TrustOfficial)
	installForGrants(t, home, "stranger", fetch.TrustCommunity)
	for _, c := range []struct {
		args []string
		why  string
	}{
		{[]string{"poster", "pay"}, "money tools ask before every call"},
		{[]string{"stranger", "send"}, "a community plugin's write tools ask before every call"},
		{[]string{"poster", "send", "--tainted"}, "read no untrusted data"},
	} {
		args := append([]string{"--home", home, "run"}, c.args...)
		args = append(args, "--actor", "agent", "--approve=always")
		code, out, errs := runCLI(t, nil, args...)
		require.Equal(t, 0, code, errs)
		assert.JSONEq(t, `{"grant":"once"}`, out)
		assert.Contains(t, errs, "allowed once, not always")
		assert.Contains(t, errs, c.why)
		code, _, _ = runCLI(t, nil, append([]string{"--home", home, "run"}, append(c.args, "--actor", "agent")...)...)
		assert.Equal(t, 3, code, "%v asks again", c.args)
	}
	// a local path has no stored identity to keep a grant for
	doc := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":       "---\nid: local\nname: N\ndescription: d\nversion: 1.0.0\n---\nI.\n",
		"tools/send.yaml": "description: Sends.\neffect: write\nsteps:\n  - return: '{grant: $grant}'\n",
	})
	code, out, errs := runCLI(t, nil, "--home", home, "run", doc, "send", "--actor", "agent", "--trust", "official", "--approve=always")
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `{"grant":"once"}`, out)
	assert.Contains(t, errs, "kept only for an installed or bundled document")

	code, _, errs = runCLI(t, nil, "--home", home, "run", "poster", "send", "--actor", "agent", "--approve=always")
	require.Equal(t, 0, code, errs)
	code, out, _ = runCLI(t, nil, "--home", home, "remove", "poster")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "grants")
	installForGrants(t, home, "poster", fetch.TrustOfficial)
	code, _, _ = runCLI(t, nil, "--home", home, "run", "poster", "send", "--actor", "agent")
	assert.Equal(t, 3, code, "a reinstalled plugin starts without the removed one's grants")
}

// TestGrantIsDatedByTheClock: a standing grant kept by harness run is
// dated by HARNESS_NOW, the contract's clock (it took the real time).
func TestGrantIsDatedByTheClock(t *testing.T) {
	home := t.TempDir()
	installForGrants(t, home, "poster", fetch.TrustOfficial)
	env := map[string]string{"HARNESS_NOW": "2030-01-02T03:04:05Z"}
	code, _, errs := runCLI(t, env, "--home", home, "run", "poster", "send", "--actor", "agent", "--approve=always")
	require.Equal(t, 0, code, errs)
	code, out, errs := runCLI(t, env, "--home", home, "grants", "--json")
	require.Equal(t, 0, code, errs)
	var g struct{ Grants []struct{ Granted time.Time } }
	require.NoError(t, json.Unmarshal([]byte(out), &g))
	require.Len(t, g.Grants, 1)
	assert.WithinDuration(t, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), g.Grants[0].Granted, time.Minute, "HARNESS_NOW, as the clock runs on from it")
}
