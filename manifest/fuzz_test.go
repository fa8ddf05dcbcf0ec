package manifest_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/rogpeppe/go-internal/txtar"
)

// FuzzParse feeds PLUGIN.md texts (and one tool file) to the parser. Besides
// not crashing, every diagnostic must point inside its file and the result
// must be the same twice.
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob("testdata/lint/*.txtar")
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			continue
		}
		var plugin, tool []byte
		for _, fl := range ar.Files {
			switch {
			case fl.Name == "PLUGIN.md":
				plugin = fl.Data
			case filepath.Dir(fl.Name) == "tools" && tool == nil:
				tool = fl.Data
			}
		}
		f.Add(plugin, tool)
	}
	f.Add([]byte("---\nid: a\n---\n```yaml tool t\nsteps: [{jq: .}]\n```\n"), []byte("description: x\neffect: read\nsteps: [{jq: '.'}]\n"))
	f.Fuzz(func(t *testing.T, plugin, tool []byte) {
		if len(plugin)+len(tool) > 64<<10 {
			return
		}
		files := manifest.Files{"PLUGIN.md": plugin}
		if tool != nil {
			files["tools/t.yaml"] = tool
		}
		_, l1 := manifest.Parse(files)
		_, l2 := manifest.Parse(files)
		if l1.Error() != l2.Error() {
			t.Fatalf("two parses differ:\n%s\n---\n%s", l1.Error(), l2.Error())
		}
		for _, d := range l1.Items {
			src, ok := files[d.Pos.File]
			if !ok {
				t.Fatalf("diagnostic names a file that is not there: %s", d)
			}
			lines := bytes.Count(src, []byte("\n")) + 1
			if d.Pos.Line < 0 || d.Pos.Line > lines || (d.Pos.Line > 0 && d.Pos.Col < 1) {
				t.Fatalf("diagnostic outside its file (%d lines): %s", lines, d)
			}
		}
	})
}
