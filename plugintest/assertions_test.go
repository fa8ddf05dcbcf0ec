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

// An expected number matches only the same number: integers beyond a
// float's precision compare digit for digit, in output, equals, the store
// and a request's JSON body, and a recorded response serves them exactly.
func TestRedteamLargeIntegersCompareExactly(t *testing.T) {
	ret := `{id: 9007199254740993, big: 123456789012345678901234567890}`
	for name, tc := range map[string]struct {
		expect string
		pass   bool
	}{
		"output, last digit off":   {"output: {id: 9007199254740992, big: 123456789012345678901234567890}", false},
		"output, big off":          {"output: {id: 9007199254740993, big: 123456789012345678901234567891}", false},
		"output, exact":            {"output: {id: 9007199254740993, big: 123456789012345678901234567890}", true},
		"equals, last digit off":   {"jq: [{expr: .id, equals: 9007199254740992}]", false},
		"equals, exact":            {"jq: [{expr: .big, equals: 123456789012345678901234567890}]", true},
		"equals, small as a float": {"jq: [{expr: .id - .id, equals: 0.0}]", true},
	} {
		t.Run(name, func(t *testing.T) {
			rep := runWithin(t, oneTool(ret, "cases:\n  - tool: one\n    expect:\n      "+tc.expect+"\n"), 10*time.Second)
			require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
			require.Len(t, rep.Cases, 1)
			require.Equal(t, tc.pass, rep.OK(), "%v", rep.Cases[0].Failures)
		})
	}

	// A recorded response and a request's JSON body keep every digit.
	files := manifest.Files{
		"PLUGIN.md": []byte("---\nid: rt\nname: RT\ndescription: d\nversion: 1.0.0\naccess:\n  campus: [portal]\n---\nx\n"),
		"tools/one.yaml": []byte("description: one\neffect: write\nsteps:\n" +
			"  - request: {service: portal, method: POST, path: /a, json: {n: '${ 9007199254740993 }'}}\n" +
			"  - return: .body\n"),
	}
	for want, pass := range map[string]bool{"9007199254740993": true, "9007199254740992": false} {
		files["tests/t.yaml"] = []byte("cases:\n  - tool: one\n    exchanges:\n      - request: {method: POST, path: /a, json: {n: " + want + "}}\n" +
			"        response: {json: {n: 9007199254740993}}\n    expect:\n      output: {n: 9007199254740993}\n")
		rep := runWithin(t, files, 10*time.Second)
		require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
		require.Len(t, rep.Cases, 1)
		require.Equal(t, pass, rep.OK(), "%s: %v", want, rep.Cases[0].Failures)
	}
}

// An expectation that asserts nothing is an error of the test file, not a
// case that passes on any result.
func TestRedteamEmptyExpectationsRefused(t *testing.T) {
	for expect, want := range map[string]string{
		"{jq: []}":               "tests/t.yaml:3:18: jq lists no assertion",
		"{kv: {}}":               "tests/t.yaml:3:18: expect.kv lists no key",
		"{output: 1, kv: {}}":    "tests/t.yaml:3:29: expect.kv lists no key",
		"{status: done, jq: []}": "tests/t.yaml:3:32: jq lists no assertion",
	} {
		rep := runWithin(t, oneTool("1", "cases:\n  - tool: one\n    expect: "+expect+"\n"), 10*time.Second)
		require.True(t, rep.Problems.HasErrors(), "%s ran: %v", expect, rep.Cases)
		require.Contains(t, rep.Problems.Error(), want, expect)
		require.False(t, rep.OK())
	}
}
