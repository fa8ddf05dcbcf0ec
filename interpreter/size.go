package interpreter

import "github.com/pkuinfo/harness/steps"

// maxResultBytes bounds the JSON text of a result before it is redacted
// and cut: stringBytes, or four times the output limit (the most bytes a
// result of that many characters has) when that is larger. Redacting a
// text of escapes costs a multiple of its size, so the bound is not set
// higher than what any result that is shown whole could need.
func maxResultBytes(lim *Limits) int { return max(lim.StringBytes, 4*lim.Output) }

// maxTraceBytes bounds the JSON text of an output the trace encodes to
// show its start: a larger output is shown by its size alone.
const maxTraceBytes = 1 << 20

// resultTooLarge is the error of a result over maxResultBytes.
func resultTooLarge(lim *Limits) error {
	return &steps.LimitError{Limit: "stringBytes", Max: int64(maxResultBytes(lim)),
		What: "the result's JSON text in bytes"}
}
