package interpreter_test

import (
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
