package steps

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/itchyny/gojq"
)

// The cost of jq's builtins. Most of gojq's work is a sequence of small
// steps that the deadline and the heap watch can stop between; but some
// builtins do all their work in one Go call: comparing two values, `-` of
// two arrays, contains, inside, index, indices, rindex, add, join, split,
// explode, transpose. Their cost grows with the product of their inputs'
// sizes ([range(1e5)] - [range(1e5)] is 1e10 comparisons) or their result
// is much larger than their input (an index past the end of an array makes
// the array that long in one allocation). Each such call is estimated from
// its arguments before it runs, and refused with a LimitError past a
// budget:
//
//   - JQWork units of work (about 10 ns each: one value visited, or 64 bytes
//     of a string), for the work of one call;
//   - arrayLimit(StringBytes) elements for an array made in one call, or an
//     array index or path element given to an assignment or setpath;
//   - StringBytes for a string made in one call.
//
// Values are measured with repetition, as gojq walks them: a value that holds
// one part many times ([$a, $a, ...], or a reduce that nests `[., .]`) is
// as large as its written-out form, and measuring stops at the budget.

// JQWork bounds the work of one jq builtin call that the deadline cannot
// interrupt, in units of about 10 ns (one value compared, or 64 bytes).
const JQWork = 10_000_000

// maxIndexArray bounds the values of an array used as an index (.[$a] on an
// array runs indices($a)).
const maxIndexArray = 8

// arrayLimit is the length of the longest array one jq call may make.
func arrayLimit(maxStr int) int { return maxStr / 8 }

func workError(what string) error {
	return &LimitError{Limit: "jqWork", Max: JQWork, What: what}
}

func arrayError(maxStr int, what string) error {
	return &LimitError{Limit: "string", Max: int64(arrayLimit(maxStr)), What: what}
}

// measure counts the work units of walking v: one per value and per key,
// one per 64 bytes of a string or key, repeated parts counted each time. It
// stops once the count passes most (complete false) or the nesting passes
// maxDepth (deep true); so it visits at most most+1 values.
func measure(v any, most, maxDepth int) (n int, complete, deep bool) {
	m := meter{left: most, depth: maxDepth}
	m.walk(v, 0)
	return most - m.left, m.left >= 0 && !m.deep, m.deep
}

type meter struct {
	left, depth int
	deep        bool
}

func (m *meter) walk(v any, d int) bool {
	m.left--
	switch v := v.(type) {
	case string:
		m.left -= len(v) >> 6
	case []any:
		if d >= m.depth {
			m.deep = true
			return false
		}
		for _, x := range v {
			if m.left < 0 || !m.walk(x, d+1) {
				return false
			}
		}
	case map[string]any:
		if d >= m.depth {
			m.deep = true
			return false
		}
		for k, x := range v {
			m.left -= 1 + len(k)>>6
			if m.left < 0 || !m.walk(x, d+1) {
				return false
			}
		}
	}
	return m.left >= 0
}

// sized measures v within the budget: an error when it is deeper than
// maxDepth or larger than most.
func sized(v any, most, maxDepth int, what string) error {
	_, complete, deep := measure(v, most, maxDepth)
	if deep {
		return &LimitError{Limit: "depth", Max: int64(maxDepth), What: "a value's nesting"}
	}
	if !complete {
		return workError(what)
	}
	return nil
}

// cmpOK is the check before gojq compares a and b: the comparison walks
// both values in step, so its work is at most the smaller one's size.
func cmpOK(a, b any, maxDepth int) error {
	switch a.(type) {
	case []any:
		if _, ok := b.([]any); !ok {
			return nil // types compare in one step
		}
	case map[string]any:
		if _, ok := b.(map[string]any); !ok {
			return nil
		}
	default:
		return nil
	}
	_, complete, deep := measure(a, JQWork, maxDepth)
	if deep {
		return &LimitError{Limit: "depth", Max: int64(maxDepth), What: "a value's nesting"}
	}
	if complete {
		return nil
	}
	_, complete, deep = measure(b, JQWork, maxDepth)
	if deep {
		return &LimitError{Limit: "depth", Max: int64(maxDepth), What: "a value's nesting"}
	}
	if complete {
		return nil
	}
	return workError("a comparison of two values this large")
}

// subOK is the check before `l - r` of two arrays: each element of l is
// compared with each of r, so the work is at most len(l) times r's size,
// and at most len(r) times l's size.
func subOK(l, r []any, maxDepth int) error {
	if len(l) == 0 || len(r) == 0 {
		return nil
	}
	// (The arrays themselves count one each: not compared.)
	_, complete, deep := measure(r, JQWork/len(l)+1, maxDepth)
	if !complete && !deep {
		_, complete, deep = measure(l, JQWork/len(r)+1, maxDepth)
	}
	if deep {
		return &LimitError{Limit: "depth", Max: int64(maxDepth), What: "a value's nesting"}
	}
	if !complete {
		return workError(fmt.Sprintf("subtracting an array of %d values from one of %d", len(r), len(l)))
	}
	return nil
}

// containsOK is the check before contains(l; r) (inside swaps them): for
// arrays each element of r is looked for among all of l, recursively; for
// objects each key of r is looked up in l.
func containsOK(l, r any, maxDepth int) error {
	c := containsCost{left: JQWork, depth: maxDepth}
	if !c.walk(l, r, 0) {
		if c.deep {
			return &LimitError{Limit: "depth", Max: int64(maxDepth), What: "a value's nesting"}
		}
		return workError("contains (or inside) on these values")
	}
	return nil
}

type containsCost struct {
	left, depth int
	deep        bool
}

func (c *containsCost) walk(l, r any, d int) bool {
	c.left--
	switch l := l.(type) {
	case string:
		if r, ok := r.(string); ok {
			c.left -= (len(l) + len(r)) >> 6
		}
	case []any:
		r, ok := r.([]any)
		if !ok {
			break
		}
		// Each value of r against each of l: at most the product of
		// their sizes.
		sr, complete, deep := measure(r, c.left, c.depth-d)
		if deep {
			c.deep = true
			return false
		}
		if !complete {
			return false
		}
		sl, complete, deep := measure(l, c.left/max(sr, 1), c.depth-d)
		if deep {
			c.deep = true
			return false
		}
		if !complete {
			return false
		}
		c.left -= sl * sr
	case map[string]any:
		r, ok := r.(map[string]any)
		if !ok || len(l) < len(r) {
			break
		}
		if d >= c.depth {
			c.deep = true
			return false
		}
		for k, rv := range r {
			c.left--
			if lv, ok := l[k]; ok && !c.walk(lv, rv, d+1) {
				return false
			}
			if c.left < 0 {
				return false
			}
		}
	}
	return c.left >= 0
}

// indexOK is the check before index, indices and rindex: each position of
// v is compared with the needle x. A string is first exploded into an array
// of its characters.
func indexOK(name string, v, x any, maxStr, maxDepth int) error {
	switch v := v.(type) {
	case []any:
		xs, ok := x.([]any)
		if !ok {
			xs = []any{x}
		}
		if len(xs) == 0 || len(xs) > len(v) {
			return nil
		}
		pos := len(v) - len(xs) + 1
		_, complete, deep := measure(xs, JQWork/pos, maxDepth)
		if deep {
			return &LimitError{Limit: "depth", Max: int64(maxDepth), What: "a value's nesting"}
		}
		if !complete {
			return workError(fmt.Sprintf("%s of a needle of %d values in an array of %d", name, len(xs), len(v)))
		}
	case string:
		xs, ok := x.(string)
		if !ok {
			return nil
		}
		n, m := utf8.RuneCountInString(v), utf8.RuneCountInString(xs)
		if n > arrayLimit(maxStr) {
			return arrayError(maxStr, fmt.Sprintf("%s in a string of %d characters (it makes an array of them)", name, n))
		}
		if m > 0 && m <= n && (n-m+1)*m > JQWork {
			return workError(fmt.Sprintf("%s of a string of %d characters in one of %d", name, m, n))
		}
	}
	return nil
}

// addOK is the check before add: the strings, arrays or objects it joins.
func addOK(v any, maxStr int) error {
	var strs, elems, keys int
	each(v, func(x any) {
		switch x := x.(type) {
		case string:
			strs += len(x)
		case []any:
			elems += len(x)
		case map[string]any:
			keys += len(x)
		}
	})
	switch {
	case strs > maxStr:
		return &LimitError{Limit: "string", Max: int64(maxStr), What: "a jq string made by add"}
	case elems > arrayLimit(maxStr):
		return arrayError(maxStr, "a jq array made by add")
	case keys > JQWork:
		return workError("add of objects with this many keys")
	}
	return nil
}

// each calls f with each value of an array or object.
func each(v any, f func(any)) {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			f(x)
		}
	case map[string]any:
		for _, x := range v {
			f(x)
		}
	}
}

// joinOK is the check before join: the length of the string it makes.
func joinOK(v, sep any, maxStr int) error {
	s, _ := sep.(string)
	n, total := 0, 0
	each(v, func(x any) {
		n++
		switch x := x.(type) {
		case string:
			total += len(x)
		case bool:
			total += 5
		case nil:
		default:
			total += 32 // a number's text
		}
	})
	if n > 1 {
		total += (n - 1) * len(s)
	}
	if total > maxStr {
		return &LimitError{Limit: "string", Max: int64(maxStr), What: "a jq string made by join"}
	}
	return nil
}

// splitOK is the check before split/1 and `/` of strings: the pieces.
func splitOK(s, sep string, maxStr int) error {
	if n := strings.Count(s, sep) + 1; n > arrayLimit(maxStr) {
		return arrayError(maxStr, fmt.Sprintf("a split into %d pieces", n))
	}
	return nil
}

// transposeOK is the check before transpose: rows times the longest row.
func transposeOK(v any, maxStr int) error {
	rows, ok := v.([]any)
	if !ok {
		return nil
	}
	long := 0
	for _, r := range rows {
		if r, ok := r.([]any); ok {
			long = max(long, len(r))
		}
	}
	if long > 0 && len(rows) > arrayLimit(maxStr)/long {
		return arrayError(maxStr, fmt.Sprintf("transpose of %d rows of up to %d values", len(rows), long))
	}
	return nil
}

// indexValue is the value of a non-negative array index, and whether v is
// a number at all.
func indexValue(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, true
	}
	return 0, false
}

// idxOK is _h_idx, the check of an index `.[n]`: an assignment through an
// index past an array's end makes the array that long in one allocation,
// so an index past arrayLimit is refused (read or write: the program
// cannot tell them apart). An array used as an index (which runs indices)
// is limited to maxIndexArray values.
func idxOK(v any, maxStr int) error {
	if f, ok := indexValue(v); ok {
		if f >= float64(arrayLimit(maxStr)) || math.IsInf(f, 1) {
			return arrayError(maxStr, "the array index "+gojq.Preview(v))
		}
		return nil
	}
	if a, ok := v.([]any); ok {
		if _, complete, _ := measure(a, maxIndexArray, 4); !complete {
			return fmt.Errorf("an array used as an index may hold at most %d values (use indices)", maxIndexArray)
		}
	}
	return nil
}

// pathOK is the check of a path given to setpath, getpath or delpaths.
func pathOK(p any, maxStr, maxDepth int) error {
	ps, ok := p.([]any)
	if !ok {
		return nil
	}
	if len(ps) > maxDepth {
		return &LimitError{Limit: "depth", Max: int64(maxDepth), What: "a path"}
	}
	for _, x := range ps {
		if err := idxOK(x, maxStr); err != nil {
			return err
		}
	}
	return sized(p, JQWork, maxDepth, "a path")
}

// costOK is _h_cost: the check before one of costFuncs runs on v.
func costOK(name string, v any, args []any, maxStr, maxDepth int) error {
	var x any
	if len(args) > 0 {
		x = args[0]
	}
	if recursing[name] {
		if err := checkValue(v, maxDepth, 4*maxStr); err != nil {
			return err
		}
		if argGuarded[name] {
			if err := checkValue(x, maxDepth, 4*maxStr); err != nil {
				return err
			}
		}
	}
	switch name {
	case "contains":
		return containsOK(v, x, maxDepth)
	case "inside":
		return containsOK(x, v, maxDepth)
	case "index", "indices", "rindex":
		return indexOK(name, v, x, maxStr, maxDepth)
	case "add":
		return addOK(v, maxStr)
	case "join":
		return joinOK(v, x, maxStr)
	case "split":
		if s, ok := v.(string); ok {
			if sep, ok := x.(string); ok {
				return splitOK(s, sep, maxStr)
			}
		}
	case "explode":
		if s, ok := v.(string); ok {
			if n := utf8.RuneCountInString(s); n > arrayLimit(maxStr) {
				return arrayError(maxStr, fmt.Sprintf("explode of a string of %d characters", n))
			}
		}
	case "transpose":
		return transposeOK(v, maxStr)
	case "bsearch":
		// About log2(n) comparisons with x, each at most x's size.
		if a, ok := v.([]any); ok && len(a) > 0 {
			return sized(x, JQWork/bits.Len(uint(len(a))), maxDepth, "bsearch for this value")
		}
	}
	return nil
}

// costFuncs are the builtins checked by costOK, with the arity checked.
var costFuncs = map[string]int{
	"contains": 1, "inside": 1, "index": 1, "indices": 1, "rindex": 1,
	"add": 0, "join": 1, "split": 1, "explode": 0, "transpose": 0, "bsearch": 1,
}

// sub is `l - r` with subOK's check first.
func sub(l, r any, maxDepth int) any {
	switch l := l.(type) {
	case int:
		if r, ok := r.(int); ok {
			if v := l - r; (v <= l) == (r >= 0) {
				return v
			}
		}
	case float64:
		if r, ok := r.(float64); ok {
			return l - r
		}
	case []any:
		if r, ok := r.([]any); ok {
			if err := subOK(l, r, maxDepth); err != nil {
				return err
			}
		}
	}
	return runPair(subCode, l, r)
}

// div is `l / r` with splitOK's check first (a string divided by a
// string is split).
func div(l, r any, maxStr int) any {
	switch l := l.(type) {
	case float64:
		if r, ok := r.(float64); ok && r != 0 {
			return l / r
		}
	case string:
		if r, ok := r.(string); ok {
			if err := splitOK(l, r, maxStr); err != nil {
				return err
			}
		}
	}
	return runPair(divCode, l, r)
}

var (
	subCode = mustCode(".[0] - .[1]")
	divCode = mustCode(".[0] / .[1]")
)

// internalNames are gojq's builtins that stand behind operators and other
// builtins (`_multiply` is `*`): called by name they would skip the checks
// the operators have, so a program may not call them.
var internalNames = map[string]bool{
	"_index": true, "_slice": true, "_plus": true, "_negate": true, "_add": true, "_subtract": true,
	"_multiply": true, "_divide": true, "_modulo": true, "_alternative": true, "_equal": true,
	"_notequal": true, "_greater": true, "_less": true, "_greatereq": true, "_lesseq": true,
	"_range": true, "_min_by": true, "_max_by": true, "_sort_by": true, "_group_by": true,
	"_unique_by": true, "_match": true, "_captures": true, "_tohtml": true, "_touri": true,
	"_tourid": true, "_tocsv": true, "_totsv": true, "_tosh": true, "_tobase64": true,
	"_tobase64d": true, "_modify": true, "_assign": true, "_last": true,
}

// preludeDefs are jq's own definitions (from gojq's builtin.jq) of the
// builtins that index, set paths, compare or join values given by the
// program. Compiled inside gojq they would skip the checks; a program that
// names one gets this copy, hardened as the program is.
var preludeDefs = map[string]string{
	"nth":        `def nth($n): .[$n];`,
	"add":        `def add(f): [f] | add;`,
	"fromstream": `def fromstream(f): foreach f as $pv (null; if .e then null end | $pv as [$p, $v] | if $pv | length == 2 then setpath(["v"] + $p; $v) | setpath(["e"]; $p | length == 0) else setpath(["e"]; $p | length == 1) end; if .e then .v else empty end);`,
	"sub": `def sub($re; str; $flags): reduce match($re; $flags) as {$offset, $length, $captures} ({s: ., r: []}; reduce ($captures | _captures | str) as $s (.i = 0; .r[.i] += .s[.next:$offset] + $s | .i += 1) | .next = $offset + $length) | .r[] + .s[.next:] // .s;
def sub($re; str): sub($re; str; null);`,
	"gsub":  `def gsub($re; str): sub($re; str; "g"); def gsub($re; str; $flags): sub($re; str; $flags + "g");`,
	"IN":    `def IN(s): any(s == .; .); def IN(src; s): any(src == s; .);`,
	"INDEX": `def INDEX(stream; idx_expr): reduce stream as $row ({}; .[$row | idx_expr | tostring] = $row); def INDEX(idx_expr): INDEX(.[]; idx_expr);`,
	"JOIN":  `def JOIN($idx; idx_expr): [.[] | [., $idx[idx_expr]]]; def JOIN($idx; stream; idx_expr): stream | [., $idx[idx_expr]]; def JOIN($idx; stream; idx_expr; join_expr): stream | [., $idx[idx_expr]] | join_expr;`,
	// The keys sort_by and the others compare, checked as a whole (each
	// key alone passes the program's check: a thousand keys that are one
	// array of 1e5 values cost 1e10 comparisons in one call).
	"sort_by":   `def sort_by(f): _sort_by(map([f]) | _h_keys("sort_by"));`,
	"group_by":  `def group_by(f): _group_by(map([f]) | _h_keys("group_by"));`,
	"unique_by": `def unique_by(f): _unique_by(map([f]) | _h_keys("unique_by"));`,
	"min_by":    `def min_by(f): _min_by(map([f]) | _h_keys("min_by"));`,
	"max_by":    `def max_by(f): _max_by(map([f]) | _h_keys("max_by"));`,
	// The engine's JSON decoder: integers of more than MaxIntegerDigits
	// digits are read as floats (parsing them exactly is quadratic), and
	// the nesting is bounded.
	"fromjson": `def fromjson: _h_fromjson;`,
	// Go's Bessel functions of order n loop n times in one call.
	"jn": `def jn($n; $x): _h_bessel("jn"; $n; $x);`,
	"yn": `def yn($n; $x): _h_bessel("yn"; $n; $x);`,
}

// maxBesselOrder bounds the order n of jn and yn (math.Jn and math.Yn loop
// n times: jn(2e9; 3e9) took 3.7 s in one call).
const maxBesselOrder = 1 << 20

var besselCode = map[string]*gojq.Code{"jn": mustCode("jn(.[0]; .[1])"), "yn": mustCode("yn(.[0]; .[1])")}

// bessel is _h_bessel: jn or yn, with the order bounded first.
func bessel(name string, n, x any) any {
	if f, ok := gojq.ToFloat64(n); ok && math.Abs(f) > maxBesselOrder {
		return &LimitError{Limit: "jqWork", Max: JQWork, What: fmt.Sprintf("%s of order %s (at most %d)", name, gojq.Preview(n), maxBesselOrder)}
	}
	c, ok := besselCode[name]
	if !ok {
		return fmt.Errorf("%s: not a Bessel function", name)
	}
	return runPair(c, n, x)
}

// preludeOrder lists preludeDefs so that a definition comes after those it
// calls (gsub calls sub).
var preludeOrder = []string{"nth", "add", "fromstream", "sub", "gsub", "IN", "INDEX", "JOIN",
	"sort_by", "group_by", "unique_by", "min_by", "max_by", "fromjson", "jn", "yn"}

// prelude returns the definitions of preludeDefs the program's text may
// call, parsed afresh (hardening rewrites them in place).
func prelude(src string) []*gojq.FuncDef {
	var b strings.Builder
	for _, name := range preludeOrder {
		if strings.Contains(src, name) || name == "sub" && strings.Contains(src, "gsub") {
			b.WriteString(preludeDefs[name])
			b.WriteString("\n")
		}
	}
	if b.Len() == 0 {
		return nil
	}
	b.WriteString(".")
	q, err := gojq.Parse(b.String())
	if err != nil {
		panic(err)
	}
	return q.FuncDefs
}

// checkInternal refuses calls of internalNames (a program's own function of
// that name may be called), wherever the call stands: jqNodes reaches every
// query of the program.
func checkInternal(q *gojq.Query) error {
	own := map[string]bool{}
	var calls []string
	var find func(n any)
	find = func(n any) {
		switch n := n.(type) {
		case *gojq.Query:
			for _, fd := range n.FuncDefs {
				own[fd.Name] = true
			}
		case *gojq.Term:
			if n.Func != nil {
				calls = append(calls, n.Func.Name)
			}
		}
		jqNodes(n, find)
	}
	find(q)
	for _, c := range calls {
		if internalNames[c] && !own[c] {
			return fmt.Errorf("jq: %s is internal to jq (use the operator or builtin it stands for)", c)
		}
	}
	return nil
}

// The nodes of gojq's AST that the walks over a program (the hardening,
// the cost checks) stop at: every other node is walked through.
var (
	jqQueryType  = reflect.TypeFor[*gojq.Query]()
	jqTermType   = reflect.TypeFor[*gojq.Term]()
	jqStringType = reflect.TypeFor[*gojq.String]()
	jqIndexType  = reflect.TypeFor[*gojq.Index]()
)

// jqNodes calls f with each query, term, string and index directly below
// n (one of those four), in the order of the fields that hold them. It
// walks n's fields by reflection, through every other node (function
// definitions, destructuring patterns and their computed keys, object
// entries, suffixes, function arguments, if, try, reduce, foreach, label),
// so that no part of a program that holds a query is skipped, nor a node a
// later gojq adds. (A hostile document's jq must not hide work in a part
// the checks do not see: `. as {(EXPR): $x} | ...` runs EXPR.)
func jqNodes(n any, f func(any)) {
	v := reflect.ValueOf(n)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	jqFields(v.Elem(), f)
}

func jqFields(v reflect.Value, f func(any)) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		switch v.Type() {
		case jqQueryType, jqTermType, jqStringType, jqIndexType:
			if v.CanInterface() { // (a field gojq does not export is no part of a parsed program)
				f(v.Interface())
			}
			return
		}
		jqFields(v.Elem(), f)
	case reflect.Struct:
		for i := range v.NumField() {
			jqFields(v.Field(i), f)
		}
	case reflect.Slice:
		for i := range v.Len() {
			jqFields(v.Index(i), f)
		}
	}
}

// JQBuiltin is one row of the table of how a document's jq may use gojq's
// builtins: docs/plugin-format.md holds it (generated by JQBuiltinsMarkdown;
// go test ./steps -update rewrites it), and TestJQBuiltins checks that it
// names every builtin gojq offers, once, and that each row not Plain has
// hostile cases that show its bound.
type JQBuiltin struct {
	Names []string // name/arity (`range/3`), a format (`@csv`) or a variable (`$ENV`)
	How   JQTreatment
	Note  string
}

// JQTreatment is what the engine does about a builtin.
type JQTreatment string

// The treatments of JQBuiltins.
const (
	// JQRefused: not available; the program fails lint.
	JQRefused JQTreatment = "refused"
	// JQEngine: replaced by the engine's own (nothing of the host).
	JQEngine JQTreatment = "engine's"
	// JQBounded: checked before the call, refused past a bound.
	JQBounded JQTreatment = "bounded"
	// JQSteps: runs as many small steps, stopped by the deadline and
	// the heap watch.
	JQSteps JQTreatment = "step by step"
	// JQPlain: its work is linear in its input (or less), in one call.
	JQPlain JQTreatment = "plain"
)

// JQBuiltins is every builtin gojq offers (its `builtins`, the formats and
// $ENV), by what the engine does about it.
var JQBuiltins = []JQBuiltin{
	{[]string{"input/0", "inputs/0"}, JQRefused, "a program has no input stream: \"input(s)/0 is not allowed\""},
	{[]string{"debug/1"}, JQRefused, "no debug output: \"function not defined: debug/1\" (`stderr`, `input_filename`, `$__loc__`, `$__prog_args`, `get_search_list` are not defined either)"},
	{[]string{"env/0", "$ENV"}, JQEngine, "an empty object: nothing of the host's environment"},
	{[]string{"now/0"}, JQEngine, "the engine's clock (a test's `now`), not the host's"},
	{[]string{"fromjson/0"}, JQEngine, "the engine's JSON decoder: integers of more than 1,000 digits are read as floats, nesting past `depth` is refused"},
	{[]string{"contains/1", "inside/1", "index/1", "indices/1", "rindex/1", "bsearch/1"}, JQBounded, "estimated work past `jqWork` is refused; arguments nested past `depth` too"},
	{[]string{"add/0", "add/1", "join/1", "split/1", "explode/0", "transpose/0"}, JQBounded, "a result longer than `stringBytes` (strings) or an eighth of it (arrays) is refused before it is made"},
	{[]string{"implode/0", "tojson/0", "tostring/0", "flatten/0", "flatten/1", "sort/0", "unique/0", "min/0", "max/0", "format/1", "halt_error/0", "halt_error/1",
		"@text", "@json", "@html", "@uri", "@urid", "@csv", "@tsv", "@sh", "@base64", "@base64d"}, JQBounded, "the input is checked first: nested past `depth`, or larger than four times `stringBytes`, is refused"},
	{[]string{"sort_by/1", "group_by/1", "unique_by/1", "min_by/1", "max_by/1"}, JQBounded, "all the keys together (their size at most eight times `stringBytes`, their nesting within `depth`) are checked once, before they are compared"},
	{[]string{"setpath/2", "getpath/1", "delpaths/1", "nth/1", "pick/1", "fromstream/1", "del/1"}, JQBounded, "an array index of 1,048,576 or more is refused, read or assigned, as is a path longer than `depth`"},
	{[]string{"test/1", "test/2", "match/1", "match/2", "capture/1", "capture/2", "scan/1", "scan/2", "splits/1", "splits/2", "split/2", "sub/2", "sub/3", "gsub/2", "gsub/3"},
		JQBounded, "a regexp of at most 16 KiB, whose compiled size times the string's length is at most 2^28; at most 1,024 different regexps (64 KiB in all) per program, which gojq keeps compiled; listing matches: matches times length at most 2^26"},
	{[]string{"tonumber/0"}, JQBounded, "a string of more than 1,000 characters is refused"},
	{[]string{"jn/2", "yn/2"}, JQBounded, "an order above 1,048,576 is refused (Go loops that many times)"},
	{[]string{"error/0", "error/1"}, JQBounded, "a message longer than 4,096 bytes is cut; a value larger than 4,096 units is shown as a preview"},
	{[]string{"range/1", "range/2", "range/3", "limit/2", "skip/2", "first/1", "last/1", "nth/2", "until/2", "while/2", "repeat/1",
		"recurse/0", "recurse/1", "recurse/2", "path/1", "paths/0", "paths/1", "tostream/0", "truncate_stream/1", "walk/1",
		"combinations/0", "combinations/1", "map/1", "map_values/1", "to_entries/0", "from_entries/0", "with_entries/1",
		"isempty/1", "all/0", "all/1", "all/2", "any/0", "any/1", "any/2", "IN/1", "IN/2", "INDEX/1", "INDEX/2", "JOIN/2", "JOIN/3", "JOIN/4", "select/1", "empty/0"},
		JQSteps, "each step is small (the operators and builtins it uses are bounded as above); the deadline and `heapBytes` stop the whole"},
	{[]string{"localtime/0", "strflocaltime/1", "gmtime/0", "mktime/0", "strftime/1", "strptime/1", "todate/0", "fromdate/0", "todateiso8601/0", "fromdateiso8601/0"},
		JQPlain, "time conversions (the host's time zone is all they see of it)"},
	{[]string{"length/0", "utf8bytelength/0", "keys/0", "has/1", "in/1", "type/0", "reverse/0", "startswith/1", "endswith/1", "ltrimstr/1", "rtrimstr/1", "trimstr/1",
		"ltrim/0", "rtrim/0", "trim/0", "ascii_downcase/0", "ascii_upcase/0", "toboolean/0", "not/0", "abs/0", "first/0", "last/0",
		"arrays/0", "objects/0", "iterables/0", "booleans/0", "numbers/0", "finites/0", "normals/0", "strings/0", "nulls/0", "values/0", "scalars/0",
		"builtins/0", "modulemeta/0", "halt/0"}, JQPlain, "linear in their input, or less (`modulemeta` fails: there are no modules; `halt` ends the program with an error)"},
	{[]string{"acos/0", "acosh/0", "asin/0", "asinh/0", "atan/0", "atan2/2", "atanh/0", "cbrt/0", "ceil/0", "copysign/2", "cos/0", "cosh/0", "drem/2",
		"erf/0", "erfc/0", "exp/0", "exp10/0", "exp2/0", "expm1/0", "fabs/0", "fdim/2", "floor/0", "fma/3", "fmax/2", "fmin/2", "fmod/2", "frexp/0",
		"gamma/0", "hypot/2", "j0/0", "j1/0", "ldexp/2", "lgamma/0", "log/0", "log10/0", "log1p/0", "log2/0", "logb/0", "modf/0", "nearbyint/0",
		"nextafter/2", "nexttoward/2", "pow/2", "remainder/2", "rint/0", "round/0", "scalb/2", "scalbln/2", "significand/0", "sin/0", "sinh/0",
		"sqrt/0", "tan/0", "tanh/0", "tgamma/0", "trunc/0", "y0/0", "y1/0", "infinite/0", "nan/0", "isfinite/0", "isinfinite/0", "isnan/0", "isnormal/0"},
		JQPlain, "floating point functions of one call each"},
}

// JQBuiltinsMarkdown renders JQBuiltins as the table docs/plugin-format.md
// holds between the jqbuiltins markers.
func JQBuiltinsMarkdown() string {
	var b strings.Builder
	b.WriteString("| builtins | treatment | how |\n|---|---|---|\n")
	for _, r := range JQBuiltins {
		names := make([]string, len(r.Names))
		for i, n := range r.Names {
			names[i] = "`" + n + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.Join(names, " "), r.How, r.Note)
	}
	return b.String()
}
