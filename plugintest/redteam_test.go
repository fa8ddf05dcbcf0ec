package plugintest_test

import (
	"context"
	"testing"
	"time"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/stretchr/testify/require"
)

// oneTool is a document whose tool returns the jq program given.
func oneTool(ret, tests string) manifest.Files {
	return manifest.Files{
		"PLUGIN.md":      []byte("---\nid: rt\nname: RT\ndescription: d\nversion: 1.0.0\n---\nx\n"),
		"tools/one.yaml": []byte("description: one\neffect: read\nsteps:\n  - return: '" + ret + "'\n"),
		"tests/t.yaml":   []byte(tests),
	}
}

// runWithin runs a document's tests with a short case timeout; a run that
// does not end is killed by the test's own guard and fails the test.
func runWithin(t *testing.T, files manifest.Files, timeout time.Duration) *plugintest.Report {
	t.Helper()
	done := make(chan *plugintest.Report, 1)
	go func() {
		done <- plugintest.RunFiles(context.Background(), files, plugintest.Options{Timeout: timeout})
	}()
	select {
	case rep := <-done:
		return rep
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end")
		return nil
	}
}

// A case's jq assertions run within the case's limits: an assertion that
// loops forever or grows a value without end fails its case with the
// limit's message, and never hangs the runner or exhausts its memory.
func TestRedteamAssertionsAreBounded(t *testing.T) {
	for _, prog := range []string{
		`def f: f; f`,
		`last(range(1e12))`,
		`[range(1e9)] | length == 0`,
		`reduce range(1e9) as $i ([]; . + [$i]) | length == 0`,
		`"x" * 1e9 | length == 0`,
		`[limit(1e9; repeat("xxxxxxxx"))] | length == 0`,
	} {
		t.Run(prog, func(t *testing.T) {
			rep := runWithin(t, oneTool("1", "cases:\n  - tool: one\n    expect:\n      jq:\n        - '"+prog+"'\n"), time.Second)
			require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
			require.Len(t, rep.Cases, 1)
			require.False(t, rep.OK())
			require.NotEmpty(t, rep.Cases[0].Failures)
			require.Contains(t, rep.Cases[0].Failures[0], "jq assertion at tests/t.yaml:5:11")
		})
	}
}
