//go:build linux

package steps_test

import "testing"

// TestJQBuiltinsHostile runs each hostile use of a builtin that must stop at
// run time in a child process, as TestHostileJQ does: it ends in its error,
// within the deadline plus 1 s, under the heap limit plus 256 MiB.
func TestJQBuiltinsHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	for _, c := range builtinCases {
		if c.err != "" {
			runHostile(t, c.src, c.err, 0, c.short)
		}
	}
}
