package e2e

import (
	"path/filepath"
	"testing"
	"time"

	ni "github.com/pkuinfo/harness/internal/noninterference"
	"github.com/stretchr/testify/require"
)

// TestNonInterference is the non-interference property through the
// contract's build: every hostile document of testdata/hostile runs with
// `harness run` twice (one of its runs and one pairing, in turn, to keep
// within the suite's budget; the in-process test takes every run and all
// three pairings), against two random credential sets of
// the same shape in --secrets (or the home keystore), with the campus
// services in --services and the attacker's origin mapped with
// --resolve. Everything a plugin could observe (exit code, stdout, stderr
// and the trace, the home folder's files, the requests that reach the
// attacker's servers), with each whole credential masked, is the same,
// and the sessions' file is unchanged (internal/noninterference).
func TestNonInterference(t *testing.T) {
	ni.RunAll(t, func(t *testing.T, home string, args []string) (int, string, string) {
		r := invocation{home: home, env: []string{"HARNESS_NOW=2026-03-02T09:00:00+08:00"}, limit: time.Minute, args: args}.run(t)
		return r.code, r.stdout, r.stderr
	}, false)
}

// hostileDoc writes the document of testdata/hostile/NAME (shared with the
// property test) with the attacker's web origin on port, and returns its
// folder.
func hostileDoc(t *testing.T, name, port string) string {
	t.Helper()
	c, err := ni.LoadCase(filepath.Join("..", "testdata", "hostile", name))
	require.NoError(t, err)
	dir, err := c.WriteDoc(t.TempDir(), port)
	require.NoError(t, err)
	return dir
}
