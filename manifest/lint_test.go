package manifest_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/lint/*.txtar")

// TestLintGolden parses each testdata/lint/*.txtar document (every file but
// "want") and compares the diagnostics with the "want" section.
func TestLintGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/lint/*.txtar")
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
			_, l := manifest.Parse(files)
			var b strings.Builder
			for _, d := range l.Items {
				b.WriteString(d.String())
				b.WriteByte('\n')
			}
			got := b.String()
			if *update {
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
			require.NotEmpty(t, got, "an invalid-document case must report a problem")
		})
	}
}

// TestValidDocuments: the documents under testdata/valid and the contract's
// skeleton parse without errors.
func TestValidDocuments(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/valid/*")
	dirs = append(dirs, "../testdata/skeleton")
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files, err := manifest.ReadDir(dir)
			require.NoError(t, err)
			p, l := manifest.Parse(files)
			require.False(t, l.HasErrors(), "%s", l.Error())
			require.NotEmpty(t, p.ID)
			require.NotEmpty(t, p.Tools)
		})
	}
}
