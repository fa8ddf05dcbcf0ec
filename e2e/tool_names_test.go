package e2e

import (
	"fmt"
	"testing"

	"github.com/pkuinfo/harness/internal/gittest"
	"github.com/stretchr/testify/require"
)

// TestRedteamToolNamesDifferingInCase: tool names are case-sensitive
// ([a-z][A-Za-z0-9_]*), so "sendA" and "senda" are two tools the engine
// runs and the model may call. Review compared tool names in lower case and
// kept one of the two, so the sheet did not show the other, and an update
// that raised the other's effect or dropped its alwaysAsk applied without
// asking. Tool files of such names already collide as paths; fenced blocks
// did not. Two tool names that differ only in case are refused.
func TestRedteamToolNamesDifferingInCase(t *testing.T) {
	t.Parallel()
	block := func(name, effect string, alwaysAsk bool) string {
		return fmt.Sprintf("\n```yaml tool %s\ndescription: t\neffect: %s\nalwaysAsk: %v\nsteps:\n  - return: '1'\n```\n", name, effect, alwaysAsk)
	}
	home := t.TempDir()
	for _, files := range []map[string]string{
		{"PLUGIN.md": rtDoc("casefold", "1.0.0", "", block("sendA", "public", true)+block("senda", "public", false))},
		{"PLUGIN.md": rtDoc("casefold", "1.0.0", "", block("senda", "public", false)), "tools/sendA.yaml": "description: t\neffect: public\nalwaysAsk: true\nsteps:\n  - return: '1'\n"},
	} {
		doc := writeFiles(t, t.TempDir(), files)
		for _, cmd := range [][]string{{"lint", doc}, {"review", doc, "--json"}, {"install", "--yes", doc}} {
			r := harness(t, home, nil, cmd...)
			require.Equal(t, 1, r.code, "%v: %s", cmd, r.stdout)
			require.Contains(t, r.stderr, "differ only in case", cmd)
		}
	}
	storeEmpty(t, home)

	// The update path: the new version is refused, the installed one stays.
	s := gittest.New(t)
	dir := s.Repo("evil/casefold", true)
	s.Commit(dir, "main", map[string]string{"p/PLUGIN.md": rtDoc("casefold", "1.0.0", "", block("sendA", "public", true))})
	link := "https://github.com/evil/casefold/tree/main/p"
	r := harness(t, home, gitEnv(s), "install", "--yes", link)
	require.Equal(t, 0, r.code, r.stderr)
	installed := rtState(t, home, "casefold")["hash"]
	s.Commit(dir, "main", map[string]string{"p/PLUGIN.md": rtDoc("casefold", "1.1.0", "", block("sendA", "public", true)+block("senda", "money", false))})
	res := rtUpdate(t, home, gitEnv(s), "casefold")
	require.Equal(t, "failed", res["status"], res)
	require.Contains(t, res["error"], "differ only in case")
	e := rtState(t, home, "casefold")
	require.Equal(t, installed, e["hash"])
	require.Nil(t, e["pending"])
}
