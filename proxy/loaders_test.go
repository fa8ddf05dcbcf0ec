package proxy

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/require"
)

var updateLoaders = flag.Bool("update", false, "rewrite the want sections of testdata/loaders/*.txtar")

// TestLoadersGolden loads the services.yaml or secrets.yaml of each
// testdata/loaders/*.txtar and compares the error, one FILE:LINE:COL line
// per problem (FILE relative to the case's folder), with its want section.
func TestLoadersGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/loaders/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			require.NoError(t, err)
			dir := t.TempDir()
			wantIdx, input := -1, ""
			for i, f := range ar.Files {
				if f.Name == "want" {
					wantIdx = i
					continue
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o600))
				input = f.Name
			}
			var err2 error
			switch input {
			case "services.yaml":
				_, err2 = LoadServices(filepath.Join(dir, input))
			case "secrets.yaml":
				_, err2 = LoadSecrets(filepath.Join(dir, input))
			default:
				t.Fatalf("%s holds neither services.yaml nor secrets.yaml", path)
			}
			require.Error(t, err2, "a loader case must fail")
			got := strings.ReplaceAll(err2.Error(), dir+string(filepath.Separator), "") + "\n"
			if *updateLoaders {
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
		})
	}
}
