package cli

import (
	"github.com/pkuinfo/harness/interpreter"
	"github.com/spf13/pflag"
)

// traceFlags are --trace [full|json] and --trace-json, the trace of the
// commands that run tools.
type traceFlags struct {
	trace string // "" off; "on", "full" or "json"
	json  bool
}

// add registers the flags: --trace alone is the line trace (as always),
// --trace=full or --trace full shows every output and body whole,
// --trace=json, --trace json or --trace-json writes one JSON object per event.
func (t *traceFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&t.trace, "trace", "", "print the trace on stderr: each request and step (--trace full: every output whole; --trace json: one JSON object per event)")
	fl.Lookup("trace").NoOptDefVal = "on"
	fl.BoolVar(&t.json, "trace-json", false, "print the trace on stderr as one JSON object per event (as --trace json)")
}

// takeValue reads `--trace full` and `--trace json` written with a space:
// --trace takes an optional value, so the parser left the word among the
// arguments. When the command got one argument more than it takes (want)
// and the extra is such a word, it is the trace's value: args without it
// are returned, and value is the word ("" when there is none).
func (t *traceFlags) split(args []string, want int) (rest []string, value string) {
	if t.trace != "on" || len(args) != want+1 {
		return args, ""
	}
	// First the first argument (`--trace json DOC TOOL`), then the last
	// (`DOC TOOL --trace full`).
	for _, i := range []int{0, len(args) - 1} {
		if args[i] == "full" || args[i] == "json" {
			return append(append([]string(nil), args[:i]...), args[i+1:]...), args[i]
		}
	}
	return args, ""
}

// takeValue is split, keeping the value.
func (t *traceFlags) takeValue(args []string, want int) []string {
	rest, v := t.split(args, want)
	if v != "" {
		t.trace = v
	}
	return rest
}

// mode is the trace asked for; on is false when there is none.
func (t *traceFlags) mode() (mode interpreter.TraceMode, on bool, err error) {
	if t.json {
		return interpreter.TraceJSON, true, nil
	}
	if t.trace == "" {
		return 0, false, nil
	}
	m, err := interpreter.ParseTraceMode(t.trace)
	if err != nil {
		return 0, false, Exit(ExitUsage, err)
	}
	return m, true, nil
}
