package plugintest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/require"
)

// TestFormatGolden parses each testdata/format/*.txtar document (every file
// but "want") and its tests, and compares the tests' diagnostics with the
// want section. The document itself must be valid.
func TestFormatGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/format/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			require.NoError(t, err)
			files := manifest.Files{}
			wantIdx := -1
			for i, f := range ar.Files {
				if f.Name == "want" {
					wantIdx = i
					continue
				}
				files[f.Name] = f.Data
			}
			p, l := manifest.Parse(files)
			require.False(t, l.HasErrors(), "the document of a format case must be valid: %v", l.Error())
			_, l = plugintest.Parse(p)
			var b strings.Builder
			for _, d := range l.Items {
				b.WriteString(d.String())
				b.WriteByte('\n')
			}
			got := b.String()
			if *plugintest.UpdateGolden {
				if wantIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					wantIdx = len(ar.Files) - 1
				}
				ar.Files[wantIdx].Data = []byte(got)
				require.NoError(t, os.WriteFile(path, txtar.Format(ar), 0o644))
				return
			}
			require.GreaterOrEqual(t, wantIdx, 0, "no want section")
			require.Equal(t, string(ar.Files[wantIdx].Data), got)
			require.NotEmpty(t, got, "a format case must report a problem")
		})
	}
}
