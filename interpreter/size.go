package interpreter

import "github.com/pkuinfo/harness/steps"

// jsonOver reports whether the JSON text of v (as steps.Encode writes it)
// is certainly longer than max bytes. It adds up a lower bound of the text
// (a string's bytes and quotes, a byte per number, brackets, commas,
// colons) and stops as soon as the sum passes max, so its cost is at most
// about max whatever v is: a value that holds one part many times over (the
// same 8 MiB string in a list of thousands, an array holding the one before
// it twice at each of 40 levels) is small in memory, enormous as text, and
// no encoder, redactor or cut may be run on it whole, since neither the
// deadline nor the heap watch can stop them. Below maxDepth levels it
// looks no further: Encode refuses such a value for its nesting.
func jsonOver(v any, maxDepth, max int) bool {
	n := 0
	return !jsonWithin(v, maxDepth, &n, max)
}

func jsonWithin(v any, left int, n *int, max int) bool {
	switch x := v.(type) {
	case string:
		*n += len(x) + 2
	case []any:
		*n += 2 + len(x)
		if left <= 0 || *n > max {
			break
		}
		for _, e := range x {
			if !jsonWithin(e, left-1, n, max) {
				return false
			}
		}
	case map[string]any:
		*n += 2 + len(x)
		if left <= 0 || *n > max {
			break
		}
		for k, e := range x {
			*n += len(k) + 3
			if !jsonWithin(e, left-1, n, max) {
				return false
			}
		}
	default:
		*n++
	}
	return *n <= max
}

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
