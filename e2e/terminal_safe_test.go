package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/gittest"
	"github.com/stretchr/testify/require"
)

// requireTerminalSafe fails when s holds a character that could drive a
// terminal: C0 controls other than line break and tab, DEL, C1 controls,
// bidi controls and the Unicode line separators.
func requireTerminalSafe(t *testing.T, what, s string) {
	t.Helper()
	for i, r := range s {
		bad := (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c ||
			r == 0x2028 || r == 0x2029
		if bad {
			t.Fatalf("%s: character %U at byte %d reaches the terminal: %q", what, r, i, s[max(0, i-60):min(len(s), i+60)])
		}
	}
}

// TestRedteamNoTerminalEscapes: text a document or a server controls
// (capability names, change lines, error messages, an HTTP reason phrase)
// never reaches the terminal with control or bidi characters, in any of
// the loading commands.
func TestRedteamNoTerminalEscapes(t *testing.T) {
	t.Parallel()
	const esc = `\e]0;owned\a\e[2J\e[1;32mtrusted\u202e`
	home := t.TempDir()
	check := func(r result, cmd ...string) {
		t.Helper()
		requireTerminalSafe(t, strings.Join(cmd, " ")+" stdout", r.stdout)
		requireTerminalSafe(t, strings.Join(cmd, " ")+" stderr", r.stderr)
	}
	run := func(env []string, cmd ...string) result {
		t.Helper()
		r := harnessGuarded(t, home, env, 60*time.Second, cmd...)
		check(r, cmd...)
		return r
	}

	// An unknown capability is shown by name: one that is not a name is
	// refused, wherever it is read.
	old := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": rtDoc("esc", "1.0.0", "", "")})
	hostile := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": rtDoc("esc", "1.1.0", "requires: [\""+esc+"\"]\n", "")})
	for _, cmd := range [][]string{{"lint", hostile}, {"review", hostile}, {"review", "--json", hostile}, {"diff", old, hostile}, {"install", "--yes", hostile}} {
		r := run(nil, cmd...)
		require.Equal(t, 1, r.code, "%v: %s", cmd, r.stdout)
		require.Contains(t, r.stderr, "a capability is a name", cmd)
	}
	storeEmpty(t, home)

	// The same through an update, next to a wider one that waits and is
	// accepted: list, update and accept print only safe text.
	s := gittest.New(t)
	dir := s.Repo("evil/esc", true)
	env := gitEnv(s)
	link := "https://github.com/evil/esc/tree/main/p"
	s.Commit(dir, "main", map[string]string{"p/PLUGIN.md": rtDoc("esc", "1.0.0", "", "")})
	require.Equal(t, 0, run(env, "install", "--yes", link).code)
	s.Commit(dir, "main", map[string]string{"p/PLUGIN.md": rtDoc("esc", "1.1.0", "requires: [\""+esc+"\"]\n", "")})
	run(env, "update", "--force")
	require.Contains(t, rtState(t, home, "esc")["lastError"], "a capability is a name")
	run(env, "list")
	s.Commit(dir, "main", map[string]string{"p/PLUGIN.md": rtDoc("esc", "1.2.0", "requires: [teleport]\naccess:\n  campus: [card]\n", "")})
	res := rtUpdate(t, home, env, "esc")
	require.Equal(t, "pending", res["status"], res)
	run(env, "list")
	run(env, "list", "--json")
	r := run(env, "accept", "esc")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "+ new campus service card")

	// A server's reason phrase is the server's text.
	srv := rawServer(t, "HTTP/1.1 404 Not\x1b]0;owned\x07Found\x1b[2J\u202e\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	r = run(nil, "install", "--yes", srv+"/x/PLUGIN.md")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "404")
	r = run([]string{"HARNESS_GIT_BASE=" + srv}, "review", "https://github.com/evil/esc/tree/main/p")
	require.Equal(t, 1, r.code)
}

// TestRedteamLinkReordering: a local folder (unpacked from an archive, say)
// whose name holds a right-to-left override would reorder the Link line of
// the review sheet and of harness list. Links with bidirectional controls
// are refused.
func TestRedteamLinkReordering(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := filepath.Join(t.TempDir(), "canteen\u202edm.NIGULP")
	writeFiles(t, dir, map[string]string{"PLUGIN.md": rtDoc("bidi", "1.0.0", "", "```yaml tool t\n"+rtTool+"```\n")})
	for _, cmd := range [][]string{{"install", "--yes", dir}, {"review", dir}, {"diff", dir, dir}} {
		r := harness(t, home, nil, cmd...)
		require.Equal(t, 1, r.code, "%v: %s", cmd, r.stdout)
		require.Contains(t, r.stderr, "bidirectional", cmd)
		requireTerminalSafe(t, cmd[0], r.stdout+r.stderr)
	}
	storeEmpty(t, home)
}
