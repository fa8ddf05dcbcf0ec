package plugintest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
)

// FuzzParse feeds arbitrary test files to the parser: it never panics, every
// diagnostic points inside the test file (or PLUGIN.md), and parsing is
// deterministic.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "plugins-official", "*", "tests", "*.yaml"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(string(b))
		}
	}
	f.Add(passing)
	f.Add("cases: [{tool: bal, expect: {jq: ['.']}}]")
	f.Fuzz(func(t *testing.T, tests string) {
		if len(tests) > 64<<10 {
			return
		}
		files := demo(tests)
		p, l := manifest.Parse(files)
		if l.HasErrors() {
			return
		}
		_, l1 := plugintest.Parse(p)
		_, l2 := plugintest.Parse(p)
		if l1.Error() != l2.Error() {
			t.Fatalf("two parses differ:\n%s\n%s", l1.Error(), l2.Error())
		}
		lines := strings.Count(tests, "\n") + 1
		for _, d := range l1.Items {
			if d.Pos.File != "tests/cases.yaml" {
				continue
			}
			if d.Pos.Line < 1 || d.Pos.Line > lines || d.Pos.Col < 1 {
				t.Fatalf("diagnostic outside the file (%d lines): %s", lines, d)
			}
		}
	})
}
