package steps

import (
	"strconv"

	"github.com/itchyny/gojq"
)

// fast is a jq program simple enough to evaluate without gojq: a path of
// object keys from `.` or a variable (`.status`, `$input.building`),
// optionally compared with == or != to a literal. Anything it cannot decide
// (a key of a non-object) falls back to gojq, which gives the exact error.
type fast struct {
	slot int // -1: `.`; else the variable's slot
	keys []string
	op   gojq.Operator // 0, OpEq or OpNe
	lit  any
	// or an object of such paths: {a: .x, b: $y.z, c}
	objKeys []string
	objVals []*fast
	// or a literal: true, 200, "x"
	isConst bool
}

// fastOf recognises a fast program in q (before hardening).
func fastOf(q *gojq.Query, sc *Scope) *fast {
	if len(q.FuncDefs) > 0 || q.Meta != nil || len(q.Imports) > 0 {
		return nil
	}
	if q.Term != nil {
		if q.Term.Type == gojq.TermTypeObject && len(q.Term.SuffixList) == 0 {
			return objectOf(q.Term.Object, sc)
		}
		if lit, ok := literal(q.Term); ok {
			return &fast{isConst: true, lit: lit}
		}
		return pathOf(q.Term, sc)
	}
	if (q.Op != gojq.OpEq && q.Op != gojq.OpNe) || q.Left == nil || q.Right == nil || q.Left.Term == nil || q.Right.Term == nil ||
		len(q.Left.FuncDefs) > 0 || len(q.Right.FuncDefs) > 0 {
		return nil
	}
	f := pathOf(q.Left.Term, sc)
	lit, ok := literal(q.Right.Term)
	if f == nil || !ok {
		return nil
	}
	f.op, f.lit = q.Op, lit
	return f
}

func pathOf(t *gojq.Term, sc *Scope) *fast {
	f := &fast{slot: -1}
	switch t.Type {
	case gojq.TermTypeIdentity:
	case gojq.TermTypeIndex:
		if t.Index == nil || t.Index.Name == "" || t.Index.Start != nil || t.Index.End != nil || t.Index.Str != nil || t.Index.IsSlice {
			return nil
		}
		f.keys = append(f.keys, t.Index.Name)
	case gojq.TermTypeFunc:
		if t.Func == nil || len(t.Func.Args) > 0 || len(t.Func.Name) < 2 || t.Func.Name[0] != '$' {
			return nil
		}
		slot, ok := sc.Lookup(t.Func.Name[1:])
		if !ok {
			return nil
		}
		f.slot = slot
	default:
		return nil
	}
	for _, s := range t.SuffixList {
		if s.Iter || s.Optional || s.Index == nil || s.Index.Name == "" || s.Index.Start != nil || s.Index.End != nil || s.Index.Str != nil || s.Index.IsSlice {
			return nil
		}
		f.keys = append(f.keys, s.Index.Name)
	}
	return f
}

func objectOf(o *gojq.Object, sc *Scope) *fast {
	if o == nil || len(o.KeyVals) == 0 || len(o.KeyVals) > 32 {
		return nil
	}
	f := &fast{slot: -1}
	for _, kv := range o.KeyVals {
		if kv.Key == "" || kv.Key[0] == '$' || kv.KeyString != nil || kv.KeyQuery != nil {
			return nil
		}
		var v *fast
		if kv.Val == nil {
			v = &fast{slot: -1, keys: []string{kv.Key}}
		} else {
			if kv.Val.Term == nil || len(kv.Val.FuncDefs) > 0 || kv.Val.Term.Type == gojq.TermTypeObject {
				return nil
			}
			if v = pathOf(kv.Val.Term, sc); v == nil {
				return nil
			}
		}
		f.objKeys = append(f.objKeys, kv.Key)
		f.objVals = append(f.objVals, v)
	}
	return f
}

func literal(t *gojq.Term) (any, bool) {
	if len(t.SuffixList) > 0 {
		return nil, false
	}
	switch t.Type {
	case gojq.TermTypeNull:
		return nil, true
	case gojq.TermTypeTrue:
		return true, true
	case gojq.TermTypeFalse:
		return false, true
	case gojq.TermTypeNumber:
		if _, err := strconv.ParseFloat(t.Number, 64); err != nil {
			return nil, false
		}
		return number(t.Number), true
	case gojq.TermTypeString:
		if t.Str != nil && len(t.Str.Queries) == 0 {
			return t.Str.Str, true
		}
	}
	return nil, false
}

// eval returns the program's value, or ok false when gojq must decide.
func (f *fast) eval(fr *Frame, v any) (any, bool) {
	if f.isConst {
		return f.lit, true
	}
	if f.objKeys != nil {
		out := make(map[string]any, len(f.objKeys))
		for i, k := range f.objKeys {
			x, ok := f.objVals[i].eval(fr, v)
			if !ok {
				return nil, false
			}
			out[k] = x
		}
		return out, true
	}
	if f.slot >= 0 {
		v = fr.Vars[f.slot]
	}
	for _, k := range f.keys {
		switch m := v.(type) {
		case map[string]any:
			v = m[k]
		case nil:
		default:
			return nil, false
		}
	}
	switch f.op {
	case gojq.OpEq:
		return gojq.Compare(v, f.lit) == 0, true
	case gojq.OpNe:
		return gojq.Compare(v, f.lit) != 0, true
	}
	return v, true
}
