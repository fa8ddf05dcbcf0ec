package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTerminalSafe(t *testing.T) {
	require.Equal(t, "a\uFFFD[31mred\uFFFDb\nc\td", terminalSafe("a\x1b[31mred\u202eb\nc\td"))
}

func TestMainExitCodesAndSanitisedErrors(t *testing.T) {
	register(1000, func(*App) *cobra.Command {
		return &cobra.Command{Use: "zz-test-fail", Hidden: true, RunE: func(*cobra.Command, []string) error {
			return Exit(ExitRefused, errors.New("server says \x1b]0;pwned\x07"))
		}}
	})
	var out, errb bytes.Buffer
	code := Main([]string{"zz-test-fail"}, nil, &out, &errb, func(string) string { return "" })
	require.Equal(t, ExitRefused, code)
	require.Equal(t, "harness: server says \uFFFD]0;pwned\uFFFD\n", errb.String())
	errb.Reset()
	code = Main([]string{"no-such-command"}, nil, &out, &errb, func(string) string { return "" })
	require.Equal(t, ExitUsage, code)
	errb.Reset()
	code = Main([]string{"lint", "--no-such-flag", "x"}, nil, &out, &errb, func(string) string { return "" })
	require.Equal(t, ExitUsage, code)
}

// TestHarnessNowBounds: HARNESS_NOW that is not RFC 3339, or whose UTC
// year could not be stored with a day added, is a usage error before
// anything is stored.
func TestHarnessNowBounds(t *testing.T) {
	for _, v := range []string{"tomorrow", "9999-12-31T23:30:00-01:00", "9999-06-01T00:00:00Z", "0000-06-01T00:00:00Z"} {
		home := t.TempDir()
		code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home, "HARNESS_NOW": v}, "install", skeletonPath(), "--yes")
		assert.Equal(t, 2, code, "%s: %s", v, errs)
		assert.Empty(t, out)
		assert.Contains(t, errs, "HARNESS_NOW")
		_, err := os.Stat(filepath.Join(home, "state.json"))
		assert.True(t, os.IsNotExist(err), "%s: nothing stored", v)
	}
	home := t.TempDir()
	code, _, errs := runCLI(t, map[string]string{"HARNESS_HOME": home, "HARNESS_NOW": "9998-12-30T23:30:00Z"}, "install", skeletonPath(), "--yes")
	assert.Equal(t, 0, code, errs)
	assert.FileExists(t, filepath.Join(home, "state.json"))
}
