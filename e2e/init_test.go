package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// harness init writes a document that passes lint and test exactly as
// written: for a campus service, a web origin, a document that reaches
// nothing, and each as a single PLUGIN.md.
func TestInitPassesLintAndTest(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	for _, tc := range []struct {
		args  []string
		files []string
		cases string
	}{
		{[]string{"canteen", "--campus", "card"}, []string{"PLUGIN.md", "tools/lookup.yaml", "tests/lookup.yaml"}, "ok   canteen: 2 cases passed"},
		{[]string{"booking", "--campus", "wproc"}, []string{"PLUGIN.md", "tools/lookup.yaml", "tests/lookup.yaml"}, "ok   booking: 2 cases passed"},
		{[]string{"news", "--web", "https://news.example.edu.cn"}, []string{"PLUGIN.md", "tools/links.yaml", "tests/links.yaml"}, "ok   news: 2 cases passed"},
		{[]string{"greet"}, []string{"PLUGIN.md", "tools/hello.yaml", "tests/hello.yaml"}, "ok   greet: 2 cases passed"},
		{[]string{"one-card", "--campus", "card", "--single-file"}, []string{"PLUGIN.md"}, "ok   one-card: 2 cases passed"},
		{[]string{"one-web", "--web", "https://www.example.com:8443", "--single-file"}, []string{"PLUGIN.md"}, "ok   one-web: 2 cases passed"},
	} {
		id := tc.args[0]
		r := invocation{dir: work, home: home, args: append([]string{"init"}, tc.args...)}.run(t)
		require.Equal(t, 0, r.code, "init %v: %s", tc.args, r.stderr)
		var got []string
		require.NoError(t, filepath.WalkDir(filepath.Join(work, id), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(filepath.Join(work, id), p)
				got = append(got, filepath.ToSlash(rel))
			}
			return err
		}))
		assert.ElementsMatch(t, tc.files, got, "init %v", tc.args)
		for _, f := range tc.files {
			assert.Contains(t, r.stdout, "wrote "+filepath.Join(id, filepath.FromSlash(f)))
		}
		lint := invocation{dir: work, home: home, args: []string{"lint", id}}.run(t)
		assert.Equal(t, 0, lint.code, "lint %s: %s", id, lint.stderr)
		assert.Empty(t, lint.stderr, "lint %s prints no warning", id)
		test := invocation{dir: work, home: home, args: []string{"test", "-v", id}}.run(t)
		assert.Equal(t, 0, test.code, "test %s: %s%s", id, test.stdout, test.stderr)
		assert.Contains(t, test.stdout, tc.cases)
	}
	// The campus document has a login_required case, and it runs against
	// the simulated campus as written.
	b, err := os.ReadFile(filepath.Join(work, "canteen", "tests", "lookup.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "status: login_required")
	r := invocation{dir: work, home: home, args: []string{"run", "canteen", "lookup", "--campus"}}.run(t)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"status":200`)
	assert.Contains(t, r.stdout, `"elec_accamt"`)
}

// Bad ids, unknown services, bad origins and a folder that is not empty
// are refused with a message, and nothing is written.
func TestInitRefuses(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(work, "taken"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(work, "taken", "notes.txt"), []byte("mine"), 0o644))
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"Canteen"}, 2, `id "Canteen" must match [a-z][a-z0-9-]*`},
		{[]string{strings.Repeat("a", 41)}, 2, "at most 40 characters"},
		{[]string{"settings"}, 2, `id "settings" is reserved for the host's own tools`},
		{[]string{"mcp-x"}, 2, "reserved for remote plugins"},
		{[]string{"x", "--campus", "crad"}, 2, `campus service "crad" is not in the service catalogue (did you mean "card"?)`},
		{[]string{"x", "--campus", "iaaa"}, 2, "is the login itself"},
		{[]string{"x", "--web", "news.example.edu.cn"}, 2, "did you mean https://news.example.edu.cn?"},
		{[]string{"x", "--web", "https://news.example.edu.cn/list"}, 2, "no path, query or fragment"},
		{[]string{"x", "--web", "ftp://news.example.edu.cn"}, 2, "the scheme must be https"},
		{[]string{"x", "--web", "https://portal.pku.edu.cn"}, 2, "is the campus service portal: use --campus portal"},
		{[]string{"x", "--web", "http://127.0.0.1:8080"}, 2, "is a loopback address"},
		{[]string{"x", "--campus", "card", "--web", "https://a.example.com"}, 2, "not both"},
		{[]string{"taken", "--campus", "card"}, 1, "taken is not empty (it holds notes.txt): init never overwrites"},
	} {
		r := invocation{dir: work, home: home, args: append([]string{"init"}, tc.args...)}.run(t)
		assert.Equal(t, tc.code, r.code, "init %v", tc.args)
		assert.Contains(t, r.stderr, tc.msg, "init %v", tc.args)
		assert.Empty(t, r.stdout, "init %v", tc.args)
	}
	ents, err := os.ReadDir(work)
	require.NoError(t, err)
	require.Len(t, ents, 1, "only the folder made by the test")
	b, err := os.ReadFile(filepath.Join(work, "taken", "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "mine", string(b))
	// An empty folder is fine; --dir chooses it.
	require.NoError(t, os.MkdirAll(filepath.Join(work, "empty"), 0o755))
	r := invocation{dir: work, home: home, args: []string{"init", "fresh", "--dir", "empty"}}.run(t)
	require.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(work, "empty", "PLUGIN.md"))
}
