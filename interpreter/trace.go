package interpreter

import (
	"fmt"
	"io"
	"time"

	"github.com/pkuinfo/harness/steps"
)

// TraceView is how many characters of a step's output a trace line shows.
const TraceView = 160

// TraceWriter prints one line per step to w: position, number, kind,
// duration and a short view of the output (or the error), passed through
// redact and rid of control characters.
func TraceWriter(w io.Writer, redact func(string) string) func(steps.Event) {
	return func(e steps.Event) {
		var view string
		switch {
		case e.Err != nil:
			view = "error: " + hidePreviews(e.Err.Error())
		case e.Skipped:
			view = "skipped"
		case steps.JSONOver(e.Output, 64, maxTraceBytes):
			view = "(an output of more than 1 MiB as JSON)"
		default:
			b, err := steps.Encode(e.Output, 64)
			if err != nil {
				view = "(" + err.Error() + ")"
			} else {
				view = string(b)
			}
		}
		// Redact the whole text first: a cut could split a secret. Clean
		// it before: an invisible character removed after the redaction
		// could join a credential.
		if redact != nil {
			view = redact(steps.CleanString(view))
		}
		if r := []rune(view); len(r) > TraceView {
			view = string(r[:TraceView]) + "…"
		}
		line := fmt.Sprintf("trace: %s: step %s (%s) %s %s", e.Pos, e.Label, e.Kind, e.Duration.Round(time.Microsecond), view)
		fmt.Fprintln(w, steps.CleanString(line))
	}
}
