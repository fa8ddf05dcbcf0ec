package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite the want sections of testdata/slips/*.txtar")

// TestLintSlips: harness lint's whole output for the typical slips of an
// author (a misspelled key, a jq program or CSS selector that does not
// parse, an undeclared service, a one-space indentation slip), byte for
// byte with its positions, against testdata/slips/*.txtar (go test
// ./internal/cli -run TestLintSlips -update rewrites the want sections).
func TestLintSlips(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "slips", "*.txtar"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(paths), 5)
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			require.NoError(t, err)
			dir := t.TempDir()
			want := -1
			for i, f := range ar.Files {
				if f.Name == "want" {
					want = i
					continue
				}
				p := filepath.Join(dir, filepath.FromSlash(f.Name))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, f.Data, 0o644))
			}
			require.GreaterOrEqual(t, want, 0, "no want section")
			code, out, errs := runCLI(t, nil, "lint", dir)
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			if *updateGolden {
				ar.Files[want].Data = []byte(errs)
				require.NoError(t, os.WriteFile(path, txtar.Format(ar), 0o644))
				return
			}
			assert.Equal(t, string(ar.Files[want].Data), errs)
			assert.NotEmpty(t, errs)
		})
	}
}
