// Package cli is the harness command line. Main takes the arguments and the
// standard streams and returns the exit code, so tests need no process.
//
// Each command lives in its own file and registers itself with register in an
// init function; the exit codes are those of CONTRACT.md.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/pkuinfo/harness/internal/home"
	"github.com/spf13/cobra"
)

// Exit codes of the contract.
const (
	ExitOK      = 0
	ExitFailed  = 1 // invalid document, failed tool, nothing to do
	ExitUsage   = 2 // bad flags, unknown tool, input failing the schema
	ExitRefused = 3 // refused by the permission rules
)

// ExitError carries an exit code with its message. A nil Err prints nothing.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit wraps err with an exit code.
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// Exitf makes an error with an exit code and a message.
func Exitf(code int, format string, args ...any) error {
	return &ExitError{Code: code, Err: fmt.Errorf(format, args...)}
}

// App is what every command may use: the streams, the environment, the clock
// and the home folder.
type App struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string

	homeFlag string
}

// Home resolves the store folder from --home, HARNESS_HOME or the XDG data dir.
func (a *App) Home() (string, error) {
	if a.homeFlag == "" {
		if v := a.Getenv("HARNESS_HOME"); v != "" {
			return home.Dir(v)
		}
	}
	return home.Dir(a.homeFlag)
}

// Now is the clock: HARNESS_NOW (RFC 3339) when set, else the real time.
func (a *App) Now() (time.Time, error) {
	if v := a.Getenv("HARNESS_NOW"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return time.Time{}, Exitf(ExitUsage, "HARNESS_NOW %q is not an RFC 3339 time: %v", v, err)
		}
		// Stored times are RFC 3339 in UTC, which ends at year 9999; a
		// day's margin keeps the next check time storable too.
		if y := t.UTC().Year(); y < 1 || y > 9998 {
			return time.Time{}, Exitf(ExitUsage, "HARNESS_NOW %q is outside the years 0001 to 9998", v)
		}
		return t, nil
	}
	return time.Now(), nil
}

// Clock is the engine's clock: with HARNESS_NOW it starts at that instant
// and runs on; else the real time.
func (a *App) Clock() (func() time.Time, error) {
	if a.Getenv("HARNESS_NOW") == "" {
		return time.Now, nil
	}
	start, err := a.Now()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	return func() time.Time { return start.Add(time.Since(began)) }, nil
}

// warn prints a warning on stderr, made safe for the terminal.
func (a *App) warn(msg string) {
	fmt.Fprintln(a.Stderr, "harness: warning: "+terminalSafe(msg))
}

// StderrIsTerminal reports whether stderr is a terminal (for colour and progress).
func (a *App) StderrIsTerminal() bool { return isTerminal(a.Stderr) }

// StdinIsTerminal reports whether stdin is a terminal (for prompts).
func (a *App) StdinIsTerminal() bool { return isTerminal(a.Stdin) }

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type commandCtor struct {
	order int
	make  func(*App) *cobra.Command
}

var commands []commandCtor

// register adds a command; order sorts the help listing.
func register(order int, make func(*App) *cobra.Command) {
	commands = append(commands, commandCtor{order, make})
}

// NewRoot builds the command tree for app.
func NewRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "harness",
		Short: "Interpret, review and install PKU harness plugin documents",
		Long: `harness loads plugin documents (a folder or a single PLUGIN.md), reviews the
access they declare, installs them by link, and runs their tools through the
credential-signing proxy.

Environment:
  HARNESS_HOME             the store folder (--home wins; default the XDG data dir)
  HARNESS_NOW              an RFC 3339 time that replaces the clock (tests of the daily checks)
  HARNESS_GIT_BASE         a URL that replaces https://github.com when cloning GitHub
                           links, the official repository's too (tests on a local git server)
  HARNESS_BUNDLED_UPDATES  off: harness update checks installed links only, not the
                           bundled official documents' links`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&app.homeFlag, "home", "", "the store folder (default $HARNESS_HOME, else the XDG data dir)")
	root.SetIn(app.Stdin)
	root.SetOut(app.Stdout)
	root.SetErr(app.Stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return Exit(ExitUsage, err) })
	cs := append([]commandCtor(nil), commands...)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].order < cs[j].order })
	for _, c := range cs {
		cmd := c.make(app)
		cmd.SilenceUsage = true
		root.AddCommand(cmd)
	}
	return root
}

// Main runs the command line and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if getenv == nil {
		getenv = os.Getenv
	}
	app := &App{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv}
	root := NewRoot(app)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if msg := ee.Error(); msg != "" {
			fmt.Fprintln(stderr, "harness: "+terminalSafe(msg))
		}
		return ee.Code
	}
	// cobra's own errors (unknown command, bad arguments) are usage errors.
	fmt.Fprintln(stderr, "harness: "+terminalSafe(err.Error()))
	return ExitUsage
}

// terminalSafe replaces control and bidi characters (other than line breaks
// and tabs) in a message that may carry a server's or a document's text, so
// nothing can drive the user's terminal.
func terminalSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			return '\uFFFD'
		}
		return r
	}, s)
}
