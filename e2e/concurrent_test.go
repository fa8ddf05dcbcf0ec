package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRedteamConcurrentInstalls: installs racing in separate processes on
// one home folder. Distinct ids all land; two links racing for one id
// leave exactly one installed (the other fails and stores nothing); the
// store holds exactly the folders state.json references.
func TestRedteamConcurrentInstalls(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var docs []string
	for i := 0; i < 6; i++ {
		docs = append(docs, writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": rtDoc(fmt.Sprintf("racer-%d", i), "1.0.0", "", "```yaml tool t\n"+rtTool+"```\n")}))
	}
	for i := 0; i < 2; i++ {
		docs = append(docs, writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": rtDoc("contested", "1.0.0", "", fmt.Sprintf("Variant %d.\n```yaml tool t\n%s```\n", i, rtTool))}))
	}
	results := make([]result, len(docs))
	done := make(chan int)
	for i, d := range docs {
		go func(i int, d string) {
			results[i] = harnessGuarded(t, home, nil, 60*time.Second, "install", "--yes", d)
			done <- i
		}(i, d)
	}
	for range docs {
		<-done
	}
	for i := 0; i < 6; i++ {
		require.Equal(t, 0, results[i].code, results[i].stderr)
		rtState(t, home, fmt.Sprintf("racer-%d", i))
	}
	won := 0
	for _, r := range results[6:] {
		if r.code == 0 {
			won++
		} else {
			require.Contains(t, r.stderr, "installed from")
		}
	}
	require.Equal(t, 1, won, "exactly one link holds the contested id")
	b, err := os.ReadFile(filepath.Join(home, "state.json"))
	require.NoError(t, err)
	var st struct {
		Plugins map[string]struct{ Hash, Link string } `json:"plugins"`
	}
	require.NoError(t, json.Unmarshal(b, &st))
	require.Len(t, st.Plugins, 7)
	want := map[string]bool{}
	for _, e := range st.Plugins {
		want[strings.NewReplacer("/", "_", "+", "-", ":", "-", "=", "").Replace(e.Hash)] = true
	}
	des, err := os.ReadDir(filepath.Join(home, "store"))
	require.NoError(t, err)
	got := map[string]bool{}
	for _, de := range des {
		got[de.Name()] = true
	}
	require.Equal(t, want, got)
	r := harness(t, home, nil, "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
}

// TestRedteam2ConcurrentUpdates: update runs racing at one HARNESS_NOW on
// one home, for a wider version and then a narrower one: the wider one is
// held once and never applied by a racing run, the narrower one applies
// once, and the store keeps exactly the folders state.json references.
func TestRedteam2ConcurrentUpdates(t *testing.T) {
	t.Parallel()
	front := "access:\n  campus:\n    - service: card\n      paths: [/api/, /old/]\n"
	r := newRT2Repo(t, "race", rtDoc("race", "1.0.0", front, rt2Tool("a", "read", "", "")))
	race := func(d time.Duration) []result {
		out := make([]result, 4)
		done := make(chan int)
		for i := range out {
			go func(i int) {
				out[i] = harnessGuarded(t, r.home, r.at(d), 60*time.Second, "update", "--json")
				done <- i
			}(i)
		}
		for range out {
			<-done
		}
		return out
	}
	r.push(rtDoc("race", "1.1.0", front, rt2Tool("a", "read", "", "")+rt2Tool("b", "write", "", "")))
	for _, res := range race(24 * time.Hour) {
		require.Equal(t, 0, res.code, res.stderr)
	}
	e := rtState(t, r.home, "race")
	require.Equal(t, "1.0.0", e["version"])
	require.Equal(t, "1.1.0", e["pending"].(map[string]any)["version"])

	r.push(rtDoc("race", "1.2.0", strings.Replace(front, ", /old/", "", 1), rt2Tool("a", "read", "", "")))
	applied := 0
	for _, res := range race(48 * time.Hour) {
		require.Equal(t, 0, res.code, res.stderr)
		var reps []map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &reps), res.stdout)
		if reps[0]["applied"] == true {
			applied++
		}
	}
	require.Equal(t, 1, applied, "one run applied it; the others found it applied")
	e = rtState(t, r.home, "race")
	require.Equal(t, "1.2.0", e["version"])
	require.Nil(t, e["pending"])
	des, err := os.ReadDir(filepath.Join(r.home, "store"))
	require.NoError(t, err)
	require.Len(t, des, 1, "only the installed version is kept")
	res := harness(t, r.home, nil, "run", "race", "a")
	require.Equal(t, 0, res.code, res.stderr)
}
