package review

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/diff/*.txtar")

// TestDiffGolden reads testdata/diff/*.txtar: the files of old/ and new/,
// then "want" (the text diff) and "want.json".
func TestDiffGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/diff/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			require.NoError(t, err)
			docs := map[string]manifest.Files{"old/": {}, "new/": {}}
			for _, f := range ar.Files {
				for prefix, files := range docs {
					if name, ok := strings.CutPrefix(f.Name, prefix); ok {
						files[name] = f.Data
					}
				}
			}
			parse := func(files manifest.Files) *manifest.Plugin {
				p, l := manifest.Parse(files)
				require.False(t, l.HasErrors(), "%v", l)
				return p
			}
			d := Diff(parse(docs["old/"]), parse(docs["new/"]))
			var text, js bytes.Buffer
			require.NoError(t, d.WriteText(&text, false))
			require.NoError(t, d.WriteJSON(&js))
			got := map[string][]byte{"want": text.Bytes(), "want.json": js.Bytes()}
			if *update {
				for i, f := range ar.Files {
					if g, ok := got[f.Name]; ok {
						ar.Files[i].Data = g
						delete(got, f.Name)
					}
				}
				for _, name := range []string{"want", "want.json"} {
					if g, ok := got[name]; ok {
						ar.Files = append(ar.Files, txtar.File{Name: name, Data: g})
					}
				}
				require.NoError(t, os.WriteFile(path, txtar.Format(ar), 0o644))
				return
			}
			for _, f := range ar.Files {
				if g, ok := got[f.Name]; ok {
					require.Equal(t, string(f.Data), string(g), "%s of %s (go test ./review -run DiffGolden -update rewrites it)", f.Name, path)
					delete(got, f.Name)
				}
			}
			require.Empty(t, got, "missing sections in %s", path)
		})
	}
}
