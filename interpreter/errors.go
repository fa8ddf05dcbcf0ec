package interpreter

import (
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/steps"
)

// StepError is a failed step: where it is, which tool, its number and kind
// (steps.StepError, the engine's one positioned error). It renders as
// "tools/free.yaml:14:5: step 3 (request): the portal answered 503".
type StepError = steps.StepError

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
