package steps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// LimitError is a breached limit: which one, its value, and what breached it.
type LimitError struct {
	Limit string // the limit's name in Limits docs: "steps", "iterations", ...
	Max   int64
	What  string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s is over the %s limit of %d", e.What, e.Limit, e.Max)
}

// checkDepth reports values nested deeper than max (recursing at most max
// levels).
func checkDepth(v any, max int) error {
	if !depthOK(v, max) {
		return &LimitError{Limit: "depth", Max: int64(max), What: "a value's nesting"}
	}
	return nil
}

func depthOK(v any, left int) bool {
	switch v := v.(type) {
	case []any:
		if left <= 0 {
			return false
		}
		for _, x := range v {
			switch x.(type) {
			case []any, map[string]any:
				if !depthOK(x, left-1) {
					return false
				}
			}
		}
	case map[string]any:
		if left <= 0 {
			return false
		}
		for _, x := range v {
			switch x.(type) {
			case []any, map[string]any:
				if !depthOK(x, left-1) {
					return false
				}
			}
		}
	}
	return true
}

// checkValue reports values nested deeper than maxDepth or larger than
// maxSize bytes (strings' bytes plus 16 per value), for work whose cost or
// output grows with the value and cannot be interrupted.
func checkValue(v any, maxDepth, maxSize int) error {
	size := 0
	if !sizeOK(v, maxDepth, &size, maxSize) {
		if size > maxSize {
			return &LimitError{Limit: "string", Max: int64(maxSize), What: "a value's size for an encoder or comparison"}
		}
		return &LimitError{Limit: "depth", Max: int64(maxDepth), What: "a value's nesting"}
	}
	return nil
}

func sizeOK(v any, left int, size *int, max int) bool {
	*size += 16
	switch v := v.(type) {
	case string:
		*size += len(v)
	case []any:
		if left <= 0 {
			return false
		}
		for _, x := range v {
			if !sizeOK(x, left-1, size, max) {
				return false
			}
		}
	case map[string]any:
		if left <= 0 {
			return false
		}
		for k, x := range v {
			*size += len(k)
			if !sizeOK(x, left-1, size, max) {
				return false
			}
		}
	}
	return *size <= max
}

// DecodeJSON parses one JSON value into the values jq works on (int when an
// integer fits, *big.Int when it does not, float64 otherwise), refusing
// nesting deeper than maxDepth. (encoding/json bounds its own recursion at
// 10000 levels, so the parse itself cannot overflow the stack.)
func DecodeJSON(b []byte, maxDepth int) (any, error) {
	if !longDigits(b) {
		// No integer can lose precision as a float64: the faster decoder.
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
		// No value nests deeper than the text has brackets: a body with
		// few (most have) needs no walk of its value.
		if bytes.Count(b, []byte{'{'})+bytes.Count(b, []byte{'['}) > maxDepth && !depthOK(v, maxDepth) {
			return nil, &LimitError{Limit: "depth", Max: int64(maxDepth), What: "the JSON's nesting"}
		}
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value")
	}
	v, ok := numbers(v, maxDepth)
	if !ok {
		return nil, &LimitError{Limit: "depth", Max: int64(maxDepth), What: "the JSON's nesting"}
	}
	return v, nil
}

// longDigits reports a run of more than 15 digits (an integer a float64
// might not hold exactly; runs inside strings count too, harmlessly).
func longDigits(b []byte) bool {
	run := 0
	for _, c := range b {
		if c >= '0' && c <= '9' {
			run++
			if run > 15 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// numbers converts json.Number in place and checks the nesting.
func numbers(v any, left int) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		return number(string(x)), true
	case []any:
		if left <= 0 {
			return nil, false
		}
		for i, e := range x {
			switch e.(type) {
			case json.Number, []any, map[string]any:
				c, ok := numbers(e, left-1)
				if !ok {
					return nil, false
				}
				x[i] = c
			}
		}
	case map[string]any:
		if left <= 0 {
			return nil, false
		}
		for k, e := range x {
			switch e.(type) {
			case json.Number, []any, map[string]any:
				c, ok := numbers(e, left-1)
				if !ok {
					return nil, false
				}
				x[k] = c
			}
		}
	}
	return v, true
}

// MaxIntegerDigits bounds the integers kept exact: parsing a decimal
// integer into a big.Int takes time quadratic in its length, which no
// deadline can interrupt (4 MB of digits took half a minute), so a longer
// one is read as a floating point number.
const MaxIntegerDigits = 1000

func number(s string) any {
	if !strings.ContainsAny(s, ".eE") && len(strings.TrimPrefix(s, "-")) <= MaxIntegerDigits {
		if i, err := strconv.ParseInt(s, 10, 0); err == nil {
			return int(i)
		}
		if b, ok := new(big.Int).SetString(s, 10); ok {
			return b
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// FromGo converts any JSON-shaped Go value (float64 numbers, int64, json.Number)
// to jq's values; it returns v itself when nothing needs converting.
func FromGo(v any) any {
	if native(v) {
		return v
	}
	return fromGo(v)
}

// native reports a value jq takes as it is.
func native(v any) bool {
	switch v := v.(type) {
	case nil, bool, string, int, float64, *big.Int:
		return true
	case []any:
		for _, x := range v {
			if !native(x) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, x := range v {
			if !native(x) {
				return false
			}
		}
		return true
	}
	return false
}

func fromGo(v any) any {
	switch v := v.(type) {
	case int64:
		return int(v)
	case json.Number:
		return number(string(v))
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = fromGo(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = fromGo(x)
		}
		return out
	}
	return v
}

// MaxEncodeBytes bounds the JSON text Encode writes: a value whose text
// would be longer is refused before any of it is written.
const MaxEncodeBytes = 64 << 20

// Encode renders a jq value as compact JSON with sorted keys, after checking
// its size and nesting (encoders recurse) and removing terminal control
// characters from its strings. Its text is at most MaxEncodeBytes.
func Encode(v any, maxDepth int) ([]byte, error) {
	return EncodeWithin(v, maxDepth, MaxEncodeBytes)
}

// EncodeWithin is Encode with a text of at most maxBytes; a longer one is
// a LimitError on stringBytes, found at a cost of about maxBytes whatever
// v holds (see JSONOver).
func EncodeWithin(v any, maxDepth, maxBytes int) ([]byte, error) {
	b, over, err := EncodeBounded(v, maxDepth, maxBytes)
	if over {
		return nil, &LimitError{Limit: "stringBytes", Max: int64(maxBytes), What: "a value's JSON text"}
	}
	return b, err
}

// EncodeBounded is EncodeWithin reporting a text over maxBytes as over
// (with no text and no error) rather than as an error, for a caller that
// names the limit its own way. One walk of v answers what JSONOver,
// CheckDepth and Clean would each walk it for: the text's lower bound,
// the nesting, and whether a string or key needs cleaning.
func EncodeBounded(v any, maxDepth, maxBytes int) (b []byte, over bool, err error) {
	var sh shape
	if !sh.walk(v, maxDepth, maxBytes) {
		return nil, true, nil
	}
	if sh.deep {
		return nil, false, &LimitError{Limit: "depth", Max: int64(maxDepth), What: "a value's nesting"}
	}
	if sh.dirty {
		v = Clean(v)
	}
	// sh.n is a lower bound (a number counts one byte): a little room
	// more, so that the text is mostly one allocation.
	return appendJSON(make([]byte, 0, sh.n+sh.n/4+16), v), false, nil
}

// shape is what one walk of a value finds: jsonWithin's lower bound of its
// JSON text, whether it nests deeper than the walk's depth (depthOK), and
// whether a string or key holds what CleanString removes.
type shape struct {
	n     int
	deep  bool
	dirty bool
}

// walk adds v to the shape; false when the text is over max. It counts as
// jsonWithin counts and stops where it stops, so that over is JSONOver's
// answer; a container at the depth limit is deep, as depthOK finds it.
func (sh *shape) walk(v any, left, max int) bool {
	switch x := v.(type) {
	case string:
		sh.n += len(x) + 2
		if !sh.dirty && !isClean(x) {
			sh.dirty = true
		}
	case []any:
		sh.n += 2 + len(x)
		if left <= 0 {
			sh.deep = true
			break
		}
		if sh.n > max {
			break
		}
		for _, e := range x {
			if !sh.walk(e, left-1, max) {
				return false
			}
		}
	case map[string]any:
		sh.n += 2 + len(x)
		if left <= 0 {
			sh.deep = true
			break
		}
		if sh.n > max {
			break
		}
		for k, e := range x {
			sh.n += len(k) + 3
			if !sh.dirty && !isClean(k) {
				sh.dirty = true
			}
			if !sh.walk(e, left-1, max) {
				return false
			}
		}
	default:
		sh.n++
	}
	return sh.n <= max
}

// JSONOver reports whether the JSON text of v (as Encode writes it) is
// certainly longer than max bytes. It adds up a lower bound of the text
// (a string's bytes and quotes, a byte per number, brackets, commas,
// colons) and stops as soon as the sum passes max, so its cost is at most
// about max whatever v is: a value that holds one part many times over (the
// same 8 MiB string in a list of thousands, an array holding the one before
// it twice at each of 40 levels) is small in memory, enormous as text, and
// no encoder, redactor or cut may be run on it whole, since neither the
// deadline nor the heap watch can stop them. Below maxDepth levels it
// looks no further: Encode refuses such a value for its nesting.
func JSONOver(v any, maxDepth, max int) bool {
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

// Clean returns v with every string rid of terminal control characters
// (see CleanString); it copies only what changes.
func Clean(v any) any {
	c, _ := clean(v)
	return c
}

func clean(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		// v itself when clean: a new interface of the same string would
		// be an allocation.
		if c := CleanString(x); c != x {
			return c, true
		}
	case []any:
		var out []any
		for i, e := range x {
			c, changed := clean(e)
			if changed && out == nil {
				out = make([]any, len(x))
				copy(out, x)
			}
			if out != nil {
				out[i] = c
			}
		}
		if out != nil {
			return out, true
		}
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			c, changed := clean(e)
			ck := CleanString(k)
			if (changed || ck != k) && out == nil {
				out = make(map[string]any, len(x))
				for k2, e2 := range x {
					out[k2] = e2
				}
			}
			if out != nil {
				if ck != k {
					delete(out, k)
				}
				out[ck] = c
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// CleanString removes terminal control characters: C0 controls other than
// tab and newline, DEL, C1 controls, and the bidirectional overrides that
// reorder what a terminal shows. Invalid UTF-8 becomes U+FFFD.
func CleanString(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || badRune(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isClean reports whether CleanString(s) is s.
func isClean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || badRune(r) {
			return false
		}
		i += n
	}
	return true
}

func badRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// CheckDepth reports a value nested deeper than max.
func CheckDepth(v any, max int) error { return checkDepth(v, max) }
