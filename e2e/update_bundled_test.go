package e2e

import (
	"encoding/json"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/gittest"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/stretchr/testify/require"
)

// updateJSON runs harness update --json (with args) and returns the
// reports by id, bundled ones under "ID (bundled)".
func updateJSON(t *testing.T, home string, env []string, args ...string) map[string]map[string]any {
	t.Helper()
	r := harnessGuarded(t, home, env, 60*time.Second, append([]string{"update", "--json"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	var reps []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &reps), r.stdout)
	out := map[string]map[string]any{}
	for _, rep := range reps {
		id := rep["id"].(string)
		if rep["bundled"] == true {
			id += " (bundled)"
		}
		out[id] = rep
	}
	return out
}

// The bundled official documents update from their folders in the official
// repository (served here on loopback): a newer version of the same access
// applies and is what run uses, a wider one waits for accept, an older one
// than the bundled copy is refused. With the tests' default environment
// (no git server given) every bundled check fails on a closed loopback
// port.
func TestBundledDocumentsUpdateFromTheirLinks(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	at := func(env []string, d time.Duration) []string {
		return append(env, "HARNESS_NOW="+t0.Add(d).Format(time.RFC3339))
	}

	// The default environment: loopback only.
	reps := updateJSON(t, home, at(nil, 0), "--force")
	for _, id := range official.Names {
		rep := reps[id+" (bundled)"]
		require.Equal(t, "failed", rep["status"], id)
		require.Contains(t, rep["error"], "127.0.0.1:1", id)
	}

	s := gittest.New(t)
	dir := s.Repo("pkuinfo/pku-harness-plugins", true)
	all, err := official.Files()
	require.NoError(t, err)
	tree := map[string]string{}
	for id, files := range all {
		for name, b := range files {
			tree[id+"/"+name] = string(b)
		}
	}
	version := regexp.MustCompile(`\nversion: [0-9.]+\n`)
	push := func(v string, edit func(map[string]string)) {
		tree["canteen/PLUGIN.md"] = version.ReplaceAllString(tree["canteen/PLUGIN.md"], "\nversion: "+v+"\n")
		if edit != nil {
			edit(tree)
		}
		s.Commit(dir, "main", maps.Clone(tree))
	}
	env := gitEnv(s)

	// Newer, same access, a tool that answers without a request.
	push("1.1.0", func(tr map[string]string) {
		c := tr["canteen/tools/crowd.yaml"]
		tr["canteen/tools/crowd.yaml"] = c[:strings.Index(c, "\nsteps:\n")] + "\nsteps:\n  - return: '{from: \"the link\"}'\n"
	})
	reps = updateJSON(t, home, at(env, 24*time.Hour))
	require.Equal(t, "apply", reps["canteen (bundled)"]["status"], reps["canteen (bundled)"])
	require.Equal(t, true, reps["canteen (bundled)"]["applied"])
	require.Equal(t, "unchanged", reps["wallet (bundled)"]["status"])
	r := harness(t, home, at(env, 24*time.Hour), "run", "canteen", "crowd")
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"from":"the link"}`, r.stdout)
	r = harness(t, home, at(env, 24*time.Hour), "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `canteen\s+1\.1\.0 \(updated from bundled 1\.0\.0\)\s+official`, r.stdout)

	// Wider: pending until accepted.
	push("1.2.0", func(tr map[string]string) {
		tr["canteen/PLUGIN.md"] = strings.Replace(tr["canteen/PLUGIN.md"], "paths: [/api/crowd]", "paths: [/api/crowd, /api/menu]", 1)
	})
	reps = updateJSON(t, home, at(env, 48*time.Hour))
	require.Equal(t, "pending", reps["canteen (bundled)"]["status"])
	require.Equal(t, true, reps["canteen (bundled)"]["wider"])
	r = harness(t, home, at(env, 48*time.Hour), "accept", "canteen")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "canteen (bundled): accepted 1.1.0 → 1.2.0")

	// Older than the bundled copy: refused, the update in use stays.
	push("0.5.0", nil)
	reps = updateJSON(t, home, at(env, 72*time.Hour))
	require.Equal(t, "refused", reps["canteen (bundled)"]["status"])
	r = harness(t, home, at(env, 72*time.Hour), "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Len(t, list, 1)
	require.Equal(t, "canteen", list[0]["id"])
	require.Equal(t, true, list[0]["bundled"])
	require.Equal(t, "1.2.0", list[0]["version"])
	require.Equal(t, "official", list[0]["trust"])

	// remove drops the stored update: the bundled copy is in use again;
	// then there is nothing to remove (exit 1).
	r = harness(t, home, at(env, 72*time.Hour), "remove", "canteen")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "removed the update 1.2.0 stored from its link of the bundled official canteen; the bundled 1.0.0 is in use again")
	r = harness(t, home, at(env, 72*time.Hour), "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `[]`, r.stdout)
	r = harness(t, home, at(env, 72*time.Hour), "remove", "canteen")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "nothing to remove")
}
