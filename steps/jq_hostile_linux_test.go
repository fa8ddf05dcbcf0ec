//go:build linux

package steps_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileJQ are programs whose cost is out of proportion to their text,
// with what their error must say: quadratic builtins on big inputs, values
// that hold one part many times, indexes and pieces that would allocate far
// past the heap limit in one call, and growth the heap watch must stop.
var hostileJQ = []struct {
	src, err string
	heap     int64 // the heap limit, when not the default
	short    bool  // runs with shortDeadline: the deadline is what stops it
}{
	{`[range(1e5)] - [range(1e5)]`, "over the jqWork limit", 0, false},
	{`[range(1e5)] | contains([range(1e5)] | reverse)`, "over the jqWork limit", 0, false},
	{`[range(1e5)] as $a | $a | inside($a | reverse)`, "over the jqWork limit", 0, false},
	{`[range(1e5) | 0] | index([range(5e4) | 0] + [1])`, "over the jqWork limit", 0, false},
	{`[range(1e5) | 0] | indices([range(5e4) | 0] + [1])`, "over the jqWork limit", 0, false},
	{`[range(1e5) | 0] | rindex([1] + [range(5e4) | 0])`, "over the jqWork limit", 0, false},
	{`"a" * 1000000 | indices("a" * 1000 + "b")`, "over the jqWork limit", 0, false},
	{`reduce range(40) as $i ([]; [., .]) | . == .`, "over the jqWork limit", 0, false},
	{`reduce range(40) as $i ({}; {a: ., b: .}) | . * .`, "over the jqWork limit", 0, false},
	{`reduce range(40) as $i ({}; {a: ., b: .}) | contains(.)`, "a value's size for an encoder or comparison is over the string limit", 0, false},
	{`reduce range(40) as $i ([]; [., .]) | format("json")`, "over the string limit", 0, false},
	{`reduce range(40) as $i ([]; [., .]) | error(.)`, "jq: error (not a string): [[[[", 0, false},
	{`reduce range(40) as $i ([]; [., .]) as $d | [1] | bsearch($d)`, "over the jqWork limit", 0, false},
	{`null | .[536870000] = 1`, "the array index 536870000 is over the string limit", 0, false},
	{`null | setpath([536870000]; 1)`, "the array index 536870000 is over the string limit", 0, false},
	{`null | nth(536870000) = 1`, "the array index 536870000 is over the string limit", 0, false},
	{`null | fromstream([[536870000], 1])`, "the array index 536870000 is over the string limit", 0, false},
	{`null | pick(getpath(["a", 536870000]))`, "the array index 536870000 is over the string limit", 0, false},
	{`("x" * 8000000) as $s | [range(1000) | $s] | add`, "a jq string made by add is over the string limit", 0, false},
	{`("x" * 8000000) as $s | [range(1000) | $s] | join(",")`, "a jq string made by join is over the string limit", 0, false},
	{`[range(2000)] as $a | [range(1000) | $a] | add | length`, "a jq array made by add is over the string limit", 0, false},
	{`[range(2000) | []] + [[range(1000)]] | transpose`, "transpose of 2001 rows of up to 1000 values is over the string limit", 0, false},
	{`"x" * 8000000 | split("")`, "a split into 8000002 pieces is over the string limit", 0, false},
	{`"x" * 8000000 | explode`, "over the string limit", 0, false},
	{`"a" * 1000 | gsub("a"; "b" * 8000000)`, "over the string limit", 0, false},
	{`"x" * 1e9`, "a repeated jq string is over the string limit", 0, false},
	{`[range(1e9)] | length`, "over the deadline limit", 0, true},
	{`"x" * 8000000 | [range(300) as $i | . + "y"] | length`, "over the heapBytes limit", 128 << 20, false},
}

const hostileEnv = "HARNESS_TEST_HOSTILE_JQ"

// hostileDeadline is the deadline of a hostile run that a cost bound must
// stop: long enough that a loaded machine never reaches it first (so the
// error is the bound's), short against the minutes the programs ran before.
// shortDeadline is the deadline of the run the deadline itself must stop.
const (
	hostileDeadline = 8 * time.Second
	shortDeadline   = 2 * time.Second
)

// TestHostileJQChild runs the hostile program its environment names, when
// started by TestHostileJQ, and prints its error.
func TestHostileJQChild(t *testing.T) {
	src, ok := os.LookupEnv(hostileEnv)
	if !ok {
		t.Skip("started by TestHostileJQ")
	}
	q, err := json.Marshal(src)
	require.NoError(t, err)
	p, l := manifest.Parse(manifest.Files{
		"PLUGIN.md":       []byte("---\nid: hostile\nname: Hostile\ndescription: A test document.\nversion: 1.0.0\n---\nInstructions.\n"),
		"tools/tool.yaml": []byte("description: T.\neffect: read\nsteps:\n  - jq: " + string(q) + "\n"),
	})
	require.False(t, l.HasErrors(), "%s", l.Error())
	lim := steps.DefaultLimits()
	lim.Deadline = hostileDeadline
	if os.Getenv(hostileEnv+"_SHORT") != "" {
		lim.Deadline = shortDeadline
	}
	if h := os.Getenv(hostileEnv + "_HEAP"); h != "" {
		// The heap watch's case: a smaller heap limit, reached within
		// a longer deadline on a slow machine.
		lim.HeapBytes, err = strconv.ParseInt(h, 10, 64)
		require.NoError(t, err)
		lim.Deadline = 4 * hostileDeadline
	}
	prog, l := interpreter.Compile(p, interpreter.WithLimits(lim))
	require.False(t, l.HasErrors(), "%s", l.Error())
	start := time.Now()
	_, err = prog.Run(context.Background(), "tool", map[string]any{})
	fmt.Printf("\nTOOK: %d\nRESULT: %v\n", time.Since(start), err)
}

// TestHostileJQ runs each hostile program in a child process (this test
// binary again) with the default heap limit and an 8 s deadline (2 s for the
// one the deadline must stop): each ends in the error it must, within the
// deadline plus 1 s, and the child's peak
// resident memory stays under the heap limit plus 256 MiB. (The heap
// watch's own case runs with a 128 MiB heap limit and an 8 s deadline.) (Before the cost
// checks, the first program ran 43 s past a 2 s deadline, and
// `.[536870000] = 1` allocated 8 GiB in one step.)
func TestHostileJQ(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	for _, h := range hostileJQ {
		runHostile(t, h.src, h.err, h.heap, h.short)
	}
}

// runHostile runs src as a document's jq in a child process (this test
// binary again, TestHostileJQChild) with the default limits and an 8 s
// deadline (2 s when short; a 32 s one when heap sets a smaller heap
// limit), and asserts that it ends in an error holding want, within the
// deadline plus 1 s, with a peak resident memory under the heap limit plus
// 256 MiB.
func runHostile(t *testing.T, src, want string, heapLimit int64, short bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileJQChild$", "-test.count=1")
	// Under the race detector a process sleeps 1 s at exit (its
	// atexit_sleep_ms, for other threads' reports): a second per child,
	// a minute over the hostile tables, measuring nothing of the engine.
	cmd.Env = append(os.Environ(), hostileEnv+"="+src, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	heap, deadline := steps.DefaultLimits().HeapBytes, hostileDeadline
	if short {
		deadline = shortDeadline
		cmd.Env = append(cmd.Env, hostileEnv+"_SHORT=1")
	}
	if heapLimit > 0 {
		heap, deadline = heapLimit, 4*hostileDeadline
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s_HEAP=%d", hostileEnv, heapLimit))
	}
	limit := heap + 256<<20
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	require.NoError(t, err, "%s\n%s", src, out.String())
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	msg := out.String()
	// The call's own time, from its start to its error (the
	// process's start is not the engine's to bound).
	var ran time.Duration
	if j := strings.Index(msg, "TOOK: "); j >= 0 {
		n, err := strconv.ParseInt(strings.TrimSpace(strings.SplitN(msg[j+len("TOOK: "):], "\n", 2)[0]), 10, 64)
		require.NoError(t, err)
		ran = time.Duration(n)
	}
	i := strings.Index(msg, "RESULT: ")
	require.GreaterOrEqual(t, i, 0, "%s\n%s", src, msg)
	msg = strings.TrimSpace(strings.SplitN(msg[i+len("RESULT: "):], "\n", 2)[0])
	t.Logf("%5.2fs (process %5.2fs) %5d MiB  %s", ran.Seconds(), took.Seconds(), rss>>20, src)
	assert.Contains(t, msg, want, src)
	assert.Positive(t, ran, src)
	assert.Less(t, ran, deadline+time.Second, "%s: %s", src, msg)
	assert.Less(t, rss, limit, "%s: peak resident memory", src)
}
