package steps

import (
	"slices"

	"github.com/itchyny/gojq"
)

// What a step reads of its input `.`, found at compile time, so that a
// request whose response headers no step can read does not build them (a
// map of jq values, an allocation per header: the largest part of a
// short tool's cost in the engine that no step used). Every answer is
// conservative: "may read" whenever the analysis cannot tell.

// dotUse is what a jq program does with its input: the keys of it it may
// read, whether it may read it some other way (whole: iterate it, compare
// it, pass it to a function), and whether its result may hold it (tainted:
// `.`, `{a: .}`), in which case whoever reads the result reads it.
type dotUse struct {
	keys    []string
	whole   bool
	tainted bool
}

// reads reports whether a program with this use may see key k of its
// input.
func (u dotUse) reads(k string) bool {
	return u.whole || u.tainted || slices.Contains(u.keys, k)
}

// useOf finds q's use of its input.
func useOf(q *gojq.Query) dotUse {
	var u dotUse
	u.tainted = u.query(q)
	return u
}

// query records what q, run on the input, reads of it and reports whether
// q's results may hold the input.
func (u *dotUse) query(q *gojq.Query) bool {
	if q == nil {
		return true // a missing part is `.` (an if without else)
	}
	if len(q.FuncDefs) > 0 || q.Meta != nil || len(q.Imports) > 0 {
		u.whole = true
		return true
	}
	if q.Term != nil {
		return u.term(q.Term)
	}
	switch q.Op {
	case gojq.OpPipe:
		left := u.query(q.Left)
		if len(q.Patterns) > 0 { // left as $x | right: right runs on the input
			u.value(left)
			return u.query(q.Right)
		}
		if !left {
			return false // right runs on values that hold nothing of the input
		}
		return u.query(q.Right)
	case gojq.OpComma, gojq.OpAlt:
		l := u.query(q.Left)
		r := u.query(q.Right)
		return l || r
	case gojq.OpEq, gojq.OpNe, gojq.OpLt, gojq.OpGt, gojq.OpLe, gojq.OpGe, gojq.OpAnd, gojq.OpOr,
		gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod:
		u.value(u.query(q.Left))
		u.value(u.query(q.Right))
		return false
	}
	u.whole = true // assignments, updates
	return true
}

// value records that a result is used as a value (compared, computed
// with, bound, turned into text): if it may hold the input, the input may
// be read whole.
func (u *dotUse) value(tainted bool) {
	if tainted {
		u.whole = true
	}
}

func (u *dotUse) term(t *gojq.Term) bool {
	var cur bool
	switch t.Type {
	case gojq.TermTypeIdentity:
		cur = true
	case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber, gojq.TermTypeBreak:
	case gojq.TermTypeIndex:
		cur = u.index(t.Index, true)
	case gojq.TermTypeFunc:
		if t.Func == nil || len(t.Func.Name) < 2 || t.Func.Name[0] != '$' || len(t.Func.Args) > 0 {
			if t.Func != nil && t.Func.Name == "empty" && len(t.Func.Args) == 0 {
				break
			}
			u.whole = true // a builtin or a function of the program's: it may read all of `.`
			cur = true
		}
	case gojq.TermTypeString:
		u.str(t.Str)
	case gojq.TermTypeObject:
		cur = u.object(t.Object)
	case gojq.TermTypeArray:
		if t.Array != nil && t.Array.Query != nil {
			cur = u.query(t.Array.Query)
		}
	case gojq.TermTypeUnary:
		if t.Unary != nil {
			u.value(u.term(t.Unary.Term))
		}
	case gojq.TermTypeIf:
		u.value(u.query(t.If.Cond))
		cur = u.query(t.If.Then)
		for _, e := range t.If.Elif {
			u.value(u.query(e.Cond))
			cur = u.query(e.Then) || cur
		}
		cur = u.query(t.If.Else) || cur
	case gojq.TermTypeTry:
		cur = u.query(t.Try.Body) // the catch runs on the error, which holds the input only if the body used it whole
	case gojq.TermTypeQuery:
		cur = u.query(t.Query)
	default: // .., formats, reduce, foreach, label
		u.whole = true
		cur = true
	}
	for _, s := range t.SuffixList {
		switch {
		case s.Index != nil:
			cur = u.index(s.Index, cur)
		case s.Iter && cur:
			u.whole = true // the values of `.`
		}
	}
	return cur
}

// index records x applied to a value that may be the input (on): a key
// read by name, or a read of anything; the index's own expressions run on
// the input. It reports whether the result may hold the input.
func (u *dotUse) index(x *gojq.Index, on bool) bool {
	if x == nil {
		u.whole = true
		return true
	}
	u.str(x.Str)
	for _, q := range []*gojq.Query{x.Start, x.End} {
		if q != nil {
			u.value(u.query(q))
		}
	}
	if !on {
		return false
	}
	switch {
	case x.Name != "" && x.Start == nil && !x.IsSlice:
		u.keys = append(u.keys, x.Name)
		return false
	case x.Str != nil && len(x.Str.Queries) == 0 && x.Start == nil && !x.IsSlice:
		u.keys = append(u.keys, x.Str.Str)
		return false
	}
	u.whole = true // a computed key or a slice
	return true
}

func (u *dotUse) str(s *gojq.String) {
	if s == nil {
		return
	}
	for _, q := range s.Queries {
		u.value(u.query(q))
	}
}

func (u *dotUse) object(o *gojq.Object) bool {
	if o == nil {
		return false
	}
	cur := false
	for _, kv := range o.KeyVals {
		if kv.KeyQuery != nil {
			u.value(u.query(kv.KeyQuery))
		}
		u.str(kv.KeyString)
		switch {
		case kv.Val != nil:
			cur = u.query(kv.Val) || cur
		case kv.Key != "" && kv.Key[0] == '$': // {$x}
		case kv.Key != "" && kv.Key[0] == '@': // a format of `.`
			u.whole = true
		case kv.Key != "":
			u.keys = append(u.keys, kv.Key) // {body}: .body
		case kv.KeyString != nil && len(kv.KeyString.Queries) == 0:
			u.keys = append(u.keys, kv.KeyString.Str)
		default:
			u.whole = true
		}
	}
	return cur
}

// dotReader is a step that says how it reads its input `.`: only through
// the jq programs it returns (nil ones are none) and the keys it reads
// itself, and its output holds nothing of `.` that those programs' results
// do not. A kind without the method may read all of `.` and pass it on.
type dotReader interface {
	dotUse() (progs []*JQ, keys []string)
}

// headerSkipper is a step whose output holds response headers it can
// leave out (a request).
type headerSkipper interface {
	skipHeaders()
}

// settle tells each request of b whose output's headers no step can read
// to leave them out: a request bound to no name, followed by a step that
// reads its output without the headers (or steps that may be skipped,
// then one that does). A request whose output may be the block's result,
// or that a trace will show, keeps them (the trace is decided at run time).
func (b Block) settle() {
	for i, n := range b {
		r, ok := n.Step.(headerSkipper)
		if ok && n.As == 0 && !readsKey(b[i+1:], "headers") {
			r.skipHeaders()
		}
	}
}

// readsKey reports whether key k of `.` may be read by the steps of rest,
// run one after another on `.`.
func readsKey(rest Block, k string) bool {
	for _, n := range rest {
		if n.If != nil && n.If.use.reads(k) {
			return true
		}
		d, ok := n.Step.(dotReader)
		if !ok {
			return true
		}
		progs, keys := d.dotUse()
		if slices.Contains(keys, k) {
			return true
		}
		for _, p := range progs {
			if p != nil && p.use.reads(k) {
				return true
			}
		}
		if n.If == nil {
			return false // n runs, and its output is the next `.`
		}
	}
	return true // `.` may be the block's result
}
