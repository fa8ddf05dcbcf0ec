package interpreter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doubling is jq for a value that holds the one before it twice, n times
// over: a few hundred bytes of memory whose JSON text has 2^n leaves.
func doubling(n string) string { return "reduce range(" + n + ") as $i (1; [., .])" }

// A result (or a traced output, or a stored value) that shares its parts
// many times over is small in memory and enormous as JSON text: 2^40
// leaves, or the same 8 MiB string 4000 times. Encoding it whole before the
// cut would take the process's memory and time past every limit (the
// deadline and the heap watch do not stop an encoder), and crash it with
// an exit code outside the contract. Such a result is over a limit, at
// once; smaller ones are cut as before.
func TestSharedPartsDoNotBlowUpTheResult(t *testing.T) {
	p := doc(t, "access:\n  abilities: [kv]\n", map[string]string{
		"tree":    tool("  - return: '" + doubling("40") + "'\n"),
		"strings": tool("  - return: '(\"x\" * 8000000) as $s | [range(4000)] | map($s)'\n"),
		"traced":  tool("  - jq: '" + doubling("40") + "'\n  - return: 'length'\n"),
		"stored":  tool("  - kv_set: {key: k, value: '" + doubling("40") + "'}\n  - return: '1'\n"),
		"small":   tool("  - return: '" + doubling("12") + "'\n"),
	})
	prog := compile(t, p)
	redact := func(s string) string { return strings.ReplaceAll(s, "s3cr3t-session", "[redacted]") }
	for _, name := range []string{"tree", "strings"} {
		_, err := run(t, prog, name, nil, interpreter.WithRedact(redact))
		var le *steps.LimitError
		require.True(t, errors.As(err, &le), "%s: %v", name, err)
		assert.Contains(t, err.Error(), "the result", name)
	}
	var trace []string
	res, err := run(t, prog, "traced", nil, interpreter.WithTrace(interpreter.TraceWriter(writerFunc(func(b []byte) {
		trace = append(trace, string(b))
	}), redact)))
	require.NoError(t, err)
	assert.Equal(t, "2", string(res.JSON))
	require.Len(t, trace, 2)
	assert.Contains(t, trace[0], "more than")

	kv := &memKV{m: map[string]string{}}
	_, err = run(t, prog, "stored", nil, interpreter.WithKV(kv), interpreter.WithRedact(redact))
	var le *steps.LimitError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Equal(t, "kvValueBytes", le.Limit)

	res, err = run(t, prog, "small", nil, interpreter.WithRedact(redact))
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	assert.True(t, strings.HasPrefix(string(res.JSON), `{"characters":16381,`), "the cut wrapper counts every character")
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }
