package interpreter_test

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHeapWatch: a program that grows memory step by step is stopped by the
// heap watch (here with a small heap limit), naming the limit.
func TestHeapWatch(t *testing.T) {
	p := doc(t, "", map[string]string{"grow": tool("  - jq: '[range(1e9) | {a: ., b: [.]}] | length'\n")})
	lim := interpreter.DefaultLimits()
	lim.HeapBytes = 64 << 20
	prog := compile(t, p, interpreter.WithLimits(lim))
	_, err := run(t, prog, "grow", nil)
	require.Error(t, err)
	le, ok := interpreter.IsLimit(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "heapBytes", le.Limit)
	assert.Contains(t, err.Error(), "tools/grow.yaml:6:5: step 1 (jq): the process heap is over the heapBytes limit of 67108864")
}

// TestHeapWatchBound: a run that grows memory fast (many small values, as
// fast as jq makes them) is stopped near the heap limit, not a watcher's
// tick past it. The garbage collector is off while it runs, so the heap
// only grows: what it holds once the run has returned is at least what it
// held when the run stopped. The bound claimed: the heap passes the limit
// by at most what 4096 jq operations allocate (here ~100 KiB) plus one
// growth of the array being collected (here ~1 MiB); asserted with margin,
// 4 MiB (it passes by tens of KiB; sampling every 20 ms alone let it pass
// by 7 to 11 MiB).
func TestHeapWatchBound(t *testing.T) {
	p := doc(t, "", map[string]string{"grow": tool("  - jq: '[range(1e9) | {a: ., b: [.]}] | length'\n")})
	readHeap := func() int64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	for range 3 {
		runtime.GC()
		old := debug.SetGCPercent(-1)
		lim := interpreter.DefaultLimits()
		lim.HeapBytes = readHeap() + 32<<20
		prog := compile(t, p, interpreter.WithLimits(lim))
		_, err := run(t, prog, "grow", nil)
		after := readHeap()
		debug.SetGCPercent(old)
		le, ok := interpreter.IsLimit(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, "heapBytes", le.Limit)
		over := after - lim.HeapBytes
		t.Logf("the heap passed the limit by %d KiB", over>>10)
		assert.Greater(t, over, int64(0), "the run stopped before the limit")
		assert.Less(t, over, int64(4<<20), "the run passed the heap limit by %d bytes", over)
	}
}
