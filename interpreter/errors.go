package interpreter

import (
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/steps"
)

// StepError is a failed step: where it is, which tool, its number and kind.
// It renders as "tools/free.yaml:14:5: step 3 (request): the portal answered 503".
type StepError struct {
	Pos   diag.Pos
	Tool  string
	Index int    // the top-level step's number, 1-based
	Label string // the step's number as shown: "3", or "3.2" inside a foreach
	Kind  string
	Err   error
}

func (e *StepError) Error() string {
	if e.Label == "" {
		return steps.CleanString(fmt.Sprintf("%s: the result: %v", e.Pos, e.Err))
	}
	return steps.CleanString(fmt.Sprintf("%s: step %s (%s): %v", e.Pos, e.Label, e.Kind, e.Err))
}

func (e *StepError) Unwrap() error { return e.Err }

// InputError is an input that does not fit the tool's schema.
type InputError struct {
	Tool string
	Msg  string
}

func (e *InputError) Error() string {
	return steps.CleanString(fmt.Sprintf("input of tool %q: %s", e.Tool, e.Msg))
}

// UnknownToolError names a tool the document does not define.
type UnknownToolError struct {
	Tool  string
	Tools []string
}

func (e *UnknownToolError) Error() string {
	return fmt.Sprintf("no tool %q (tools: %v)", e.Tool, e.Tools)
}

// IsLimit reports whether err is a breached limit, and which.
func IsLimit(err error) (*steps.LimitError, bool) {
	var le *steps.LimitError
	ok := errors.As(err, &le)
	return le, ok
}
