package cli

import (
	"bytes"
	"errors"
	"testing"

	"github.com/spf13/cobra"
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
