package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadOnlyCommandsWriteNothing runs every command that only reads
// against a home folder that does not exist yet and lists it afterwards: a
// read must not create the home, nor any folder or file in it.
func TestReadOnlyCommandsWriteNothing(t *testing.T) {
	tmp := t.TempDir()
	doc := writeFiles(t, filepath.Join(tmp, "doc"), map[string]string{
		"PLUGIN.md":        "---\nid: ro-doc\nname: RO\ndescription: A document for read-only commands.\nversion: 1.0.0\n---\nUse it.\n",
		"tools/hello.yaml": "description: Says hello.\neffect: read\nsteps:\n  - return: '\"hello\"'\n",
		"tests/hello.yaml": "cases:\n  - tool: hello\n    expect: {output: hello}\n",
	})
	cmds := []struct {
		args []string
		code int
	}{
		{[]string{"tools"}, 0},
		{[]string{"tools", "--json"}, 0},
		{[]string{"list"}, 0},
		{[]string{"list", "--json"}, 0},
		{[]string{"lint", doc}, 0},
		{[]string{"lint", "--json", doc}, 0},
		{[]string{"hash", doc}, 0},
		{[]string{"review", doc}, 0},
		{[]string{"review", "--json", doc}, 0},
		{[]string{"diff", doc, doc}, 0},
		{[]string{"explain"}, 0},
		{[]string{"explain", "request"}, 0},
		{[]string{"test", doc}, 0},
		{[]string{"modes", "wallet"}, 0},
		{[]string{"run", doc, "hello"}, 0},
		{[]string{"run", "--trace", doc, "hello"}, 0},
		{[]string{"run", "--campus", "wallet", "cardBalance"}, 0},
		{[]string{"run", "--campus", "campus-events", "reminders"}, 0}, // a kv plugin reading an absent store
		{[]string{"run", "--campus", "canteen", "crowd"}, 0},           // a plugin with preferences
	}
	for _, c := range cmds {
		home := filepath.Join(tmp, "home-"+strings.Join(c.args[:1], "-"))
		os.RemoveAll(home)
		r := invocation{home: home, args: c.args, limit: time.Minute}.run(t)
		if r.code != c.code {
			t.Errorf("harness %v: exit %d, want %d; stderr: %s", c.args, r.code, c.code, r.stderr)
		}
		var made []string
		_ = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				made = append(made, p)
			}
			return nil
		})
		if len(made) > 0 {
			t.Errorf("harness %v wrote to a fresh home: %v", c.args, made)
		}
	}
}
