package interpreter_test

import (
	"testing"
	"time"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/require"
)

// TestClock: jq's now is the engine's clock, so "today" can be fixed by the
// host (and by HARNESS_NOW in the CLI); WithLimits keeps it.
func TestClock(t *testing.T) {
	p := doc(t, "", map[string]string{"today": tool("  - return: '{now: now, day: (now | strftime(\"%Y-%m-%d\"))}'\n")})
	at := time.Date(2026, 4, 27, 4, 0, 0, 0, time.UTC)
	prog := compile(t, p, interpreter.WithClock(func() time.Time { return at }), interpreter.WithLimits(steps.DefaultLimits()))
	res, err := run(t, prog, "today", map[string]any{})
	require.NoError(t, err)
	require.JSONEq(t, `{"now": 1777262400, "day": "2026-04-27"}`, string(res.JSON))

	// Without a clock: the real time.
	prog = compile(t, p)
	res, err = run(t, prog, "today", map[string]any{})
	require.NoError(t, err)
	require.Contains(t, string(res.JSON), time.Now().UTC().Format("2006-"))
}
