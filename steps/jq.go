package steps

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/itchyny/gojq"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

// MaxProgramBytes bounds one jq program's text.
const MaxProgramBytes = 16 << 10

// JQ is a jq program compiled once, with the variables visible where it
// stands: $input, $prefs and every `as` name bound before it. Run it with
// the frame's variable slots; it is safe for concurrent use.
type JQ struct {
	Src   string
	Pos   diag.Pos
	code  *gojq.Code
	nvars int
	fast  *fast  // set when the program needs no gojq run
	use   dotUse // what it reads of its input (dotuse.go)
}

// Scope is the variables visible at a point of a tool, in slot order: slot i
// of a frame holds names[i]. Later bindings of a known name reuse its slot,
// so the variables a program sees are always a prefix of the frame's slots.
type Scope struct {
	names []string
	max   int
}

// NewScope starts a scope with the given names (without $).
func NewScope(names ...string) *Scope {
	s := &Scope{names: append([]string(nil), names...)}
	s.max = len(s.names)
	return s
}

// Lookup returns a name's slot.
func (s *Scope) Lookup(name string) (int, bool) {
	for i, n := range s.names {
		if n == name {
			return i, true
		}
	}
	return 0, false
}

// Bind makes name visible from now on and returns its slot.
func (s *Scope) Bind(name string) int {
	if i, ok := s.Lookup(name); ok {
		return i
	}
	s.names = append(s.names, name)
	s.max = max(s.max, len(s.names))
	return len(s.names) - 1
}

// Mark and Reset bracket a nested block: names bound inside stop being
// visible after it.
func (s *Scope) Mark() int { return len(s.names) }

// Reset forgets the names bound since mark.
func (s *Scope) Reset(mark int) { s.names = s.names[:mark] }

// Len is the number of visible variables.
func (s *Scope) Len() int { return len(s.names) }

// Slots is the number of slots a frame needs for everything this scope saw.
func (s *Scope) Slots() int { return s.max }

// compileJQ parses and compiles src, hardened (see harden), with the scope's
// variables. at maps a byte offset of src to a file position.
func compileJQ(src string, sc *Scope, lim *Limits, at func(off int) diag.Pos, l *diag.List) *JQ {
	if len(src) > MaxProgramBytes {
		l.Errorf(at(0), "jq program is %d bytes, more than %d", len(src), MaxProgramBytes)
		return nil
	}
	if strings.TrimSpace(src) == "" {
		l.Errorf(at(0), "jq program is empty")
		return nil
	}
	q, err := gojq.Parse(src)
	if err != nil {
		var pe *gojq.ParseError
		off := 0
		if errors.As(err, &pe) {
			off = pe.Offset - len(pe.Token)
			if off < 0 {
				off = 0
			}
		}
		l.Errorf(at(off), "jq syntax error: %v", err)
		return nil
	}
	if q.Meta != nil || len(q.Imports) > 0 {
		l.Errorf(at(0), "jq modules (import, include) are not available")
		return nil
	}
	fst, use := fastOf(q, sc), useOf(q)
	if err := checkInternal(q); err != nil {
		l.Errorf(at(0), "%v", err)
		return nil
	}
	q.FuncDefs = append(prelude(src), q.FuncDefs...)
	if err := harden(q); err != nil {
		l.Errorf(at(0), "%v", err)
		return nil
	}
	vars := make([]string, sc.Len())
	for i, n := range sc.names {
		vars[i] = "$" + n
	}
	opts := append([]gojq.CompilerOption{gojq.WithVariables(vars)}, lim.jqOptions()...)
	code, err := gojq.Compile(q, opts...)
	if err != nil {
		msg := err.Error()
		off := 0
		if strings.HasPrefix(msg, "variable not defined: ") {
			name := strings.TrimPrefix(msg, "variable not defined: ")
			if i := strings.Index(src, name); i >= 0 {
				off = i
			}
			msg = "unknown variable " + name + " (visible here: " + strings.Join(vars, ", ") + ")"
			if s := yamlx.Suggest(name, vars); s != "" && len(name) > 1 && len(s) > 1 && s[1] == name[1] {
				msg = "unknown variable " + name + " (did you mean " + s + "?)"
			}
		} else if strings.HasPrefix(msg, "function not defined: ") {
			name := strings.TrimPrefix(msg, "function not defined: ")
			if j := strings.IndexByte(name, '/'); j > 0 {
				if i := strings.Index(src, name[:j]); i >= 0 {
					off = i
				}
			}
			msg = "jq: " + msg
		} else {
			msg = "jq: " + msg
		}
		l.Errorf(at(off), "%s", msg)
		return nil
	}
	return &JQ{Src: src, Pos: at(0), code: code, nvars: len(vars), fast: fst, use: use}
}

// CompileJQ compiles the jq program held by scalar n (the whole value; a
// bare number, boolean or null is the program it spells).
func (c *Compiler) CompileJQ(n *yaml.Node, what string) *JQ {
	s, ok := c.Text(n, what, true)
	if !ok {
		return nil
	}
	return compileJQ(s, c.Scope, c.Limits, c.at(n, 0), c.L)
}

// at maps byte offsets of scalar n's value (plus base) to file positions,
// staying on the scalar's lines: an empty value points at the scalar, an
// offset past a final newline at the last character.
func (c *Compiler) at(n *yaml.Node, base int) func(int) diag.Pos {
	return func(off int) diag.Pos {
		off += base
		v := n.Value
		if strings.TrimSpace(v) == "" {
			return c.Doc.NodePos(n)
		}
		for off > 0 && off >= len(v) && strings.HasSuffix(v[:min(off, len(v))], "\n") {
			off = min(off, len(v)) - 1
		}
		return c.Doc.OffsetPos(n, off)
	}
}

// iter runs the program on v with the frame's visible variables.
func (q *JQ) iter(ctx context.Context, f *Frame, v any) gojq.Iter {
	return q.code.RunWithContext(ctx, v, f.Vars[:q.nvars]...)
}

// First runs the program and returns its first result (null when it yields
// none).
func (q *JQ) First(ctx context.Context, f *Frame, v any) (any, error) {
	if q.fast != nil {
		if r, ok := q.fast.eval(f, v); ok {
			return r, nil
		}
	}
	var r any
	var ok bool
	if f.jq.call != nil {
		prev := f.jq.Context
		f.jq.Context = ctx
		r, ok = q.iter(&f.jq, f, v).Next()
		f.jq.Context = prev
	} else {
		r, ok = q.iter(ctx, f, v).Next()
	}
	if !ok {
		return nil, nil
	}
	if err, isErr := r.(error); isErr {
		return nil, jqError(ctx, err, f.Redact)
	}
	return r, nil
}

// Bool runs a condition: its first result's truthiness (null and false are
// false, as in jq).
func (q *JQ) Bool(ctx context.Context, f *Frame, v any) (bool, error) {
	r, err := q.First(ctx, f, v)
	if err != nil {
		return false, err
	}
	return r != nil && r != false, nil
}

// maxErrorBytes bounds the message of a jq error that leaves the program.
const maxErrorBytes = 4096

func jqError(ctx context.Context, err error, red Redactor) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var he interface{ Value() any }
	if errors.As(err, &he) {
		if s, ok := he.Value().(string); ok {
			// error("x" * 8e6) would carry megabytes past the
			// output limit: a long message keeps its start.
			if len(s) > maxErrorBytes {
				// Redacted before the cut (Frame.Redact).
				if c, cut := cutText(red, s, maxErrorBytes); cut {
					return fmt.Errorf("jq error: %s … (the message's %d bytes were cut to %d)", c, len(s), len(c))
				}
			}
			return fmt.Errorf("jq error: %s", s)
		}
		if v := he.Value(); v != nil {
			// error(v) of a large value (or one holding a part many
			// times) would print all of it: past 4096 units, a preview.
			if _, complete, _ := measure(v, 4096, 64); !complete {
				return fmt.Errorf("jq: error (not a string): %s", gojq.Preview(v))
			}
		}
	}
	return fmt.Errorf("jq: %v", err)
}

// harden rewrites a program so that work gojq cannot interrupt stays
// bounded: `+` and `*` check the size of strings and arrays they would make,
// comparisons and the builtins that recurse over a value check its nesting
// first, and paths given to setpath/delpaths are bounded.
func harden(q *gojq.Query) error {
	var err error
	var walkQ func(*gojq.Query)
	var walkT func(*gojq.Term)
	// visit hardens a node below a query or term (jqNodes finds them all:
	// function bodies, destructuring patterns' keys, every part of a term),
	// before the node above it is rewritten.
	var visit func(any)
	visit = func(n any) {
		switch n := n.(type) {
		case *gojq.Query:
			walkQ(n)
		case *gojq.Term:
			walkT(n)
		case *gojq.String:
			walkStr(n, walkQ)
		case *gojq.Index:
			jqNodes(n, visit)
			checkIndex(n)
		}
	}
	walkQ = func(q *gojq.Query) {
		if q == nil || err != nil {
			return
		}
		for _, fd := range q.FuncDefs {
			if strings.HasPrefix(fd.Name, "_h_") {
				err = fmt.Errorf("jq function names starting with _h_ are reserved")
				return
			}
		}
		jqNodes(q, visit)
		if err != nil || q.Right == nil || q.Left == nil {
			return
		}
		switch q.Op {
		case gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpEq, gojq.OpNe, gojq.OpLt, gojq.OpGt, gojq.OpLe, gojq.OpGe:
			name := map[gojq.Operator]string{gojq.OpAdd: "_h_add", gojq.OpSub: "_h_sub", gojq.OpMul: "_h_mul", gojq.OpDiv: "_h_div",
				gojq.OpEq: "_h_eq", gojq.OpNe: "_h_ne", gojq.OpLt: "_h_lt", gojq.OpGt: "_h_gt", gojq.OpLe: "_h_le", gojq.OpGe: "_h_ge"}[q.Op]
			*q = gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: name, Args: []*gojq.Query{q.Left, q.Right}}}}
		case gojq.OpUpdateAdd, gojq.OpUpdateSub, gojq.OpUpdateMul, gojq.OpUpdateDiv:
			// L op= R is `R as $x | L |= . op $x`, as jq defines it.
			name := map[gojq.Operator]string{gojq.OpUpdateAdd: "_h_add", gojq.OpUpdateSub: "_h_sub",
				gojq.OpUpdateMul: "_h_mul", gojq.OpUpdateDiv: "_h_div"}[q.Op]
			body := &gojq.Query{Left: q.Left, Op: gojq.OpModify, Right: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc,
				Func: &gojq.Func{Name: name, Args: []*gojq.Query{{Term: &gojq.Term{Type: gojq.TermTypeIdentity}},
					{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "$__h_rhs"}}}}}}}}
			*q = gojq.Query{Left: q.Right, Patterns: []*gojq.Pattern{{Name: "$__h_rhs"}}, Op: gojq.OpPipe, Right: body}
		}
	}
	walkT = func(t *gojq.Term) {
		if t == nil || err != nil {
			return
		}
		if t.Func != nil && t.Func.Name == "now" && len(t.Func.Args) == 0 {
			// now is the engine's clock (HARNESS_NOW in tests), not the host's.
			t.Func.Name = "_h_now"
		}
		jqNodes(t, visit)
		if err != nil {
			return
		}
		if t.Type == gojq.TermTypeFunc {
			if n, ok := costFuncs[t.Func.Name]; ok && n == len(t.Func.Args) {
				costGuard(t)
				return
			}
		}
		// Builtins that recurse over their input in Go: check its nesting
		// first, in a path-safe way (`if _h_ok then F else empty end`).
		guard := t.Type == gojq.TermTypeFormat
		if t.Type == gojq.TermTypeFunc && recursing[t.Func.Name] {
			guard = true
			// Arguments the builtin compares or sorts by (the keys of
			// sort_by, the needle of contains) are checked too.
			if argGuarded[t.Func.Name] {
				for i, a := range t.Func.Args {
					t.Func.Args[i] = guarded(a)
				}
			}
			if t.Func.Name == "setpath" && len(t.Func.Args) == 2 || t.Func.Name == "delpaths" && len(t.Func.Args) == 1 ||
				t.Func.Name == "getpath" && len(t.Func.Args) == 1 {
				fn := "_h_path"
				if t.Func.Name == "delpaths" {
					fn = "_h_paths"
				}
				t.Func.Args[0] = &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: fn, Args: []*gojq.Query{t.Func.Args[0]}}}}
			}
		}
		cond := "_h_ok"
		var condArgs []*gojq.Query
		if t.Type == gojq.TermTypeFunc && t.Func.Name == "tonumber" && len(t.Func.Args) == 0 {
			guard, cond = true, "_h_numok"
		}
		// The regexp and flags are $-parameters of the regex builtins:
		// bound once before the check, so that each of their values is
		// checked and used once, as jq binds them.
		var binds []*gojq.Query
		var names []string
		if t.Type == gojq.TermTypeFunc {
			if ai, ok := regexFuncs[t.Func.Name][len(t.Func.Args)]; ok {
				guard, cond = true, "_h_reok"
				bind := func(i int, name string) *gojq.Query {
					binds, names = append(binds, t.Func.Args[i]), append(names, name)
					ref := &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: name}}}
					t.Func.Args[i] = ref
					return ref
				}
				re := bind(ai[0], "$__h_re")
				flags := &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeNull}}
				if ai[1] >= 0 {
					flags = bind(ai[1], "$__h_flags")
				}
				condArgs = []*gojq.Query{re, flags, {Term: &gojq.Term{Type: gojq.TermTypeString, Str: &gojq.String{Str: t.Func.Name}}}}
			}
		}
		if guard {
			inner := *t
			inner.SuffixList = nil
			*t = gojq.Term{Type: gojq.TermTypeIf, If: &gojq.If{
				Cond: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: cond, Args: condArgs}}},
				Then: &gojq.Query{Term: &inner},
				Else: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "empty"}}},
			}, SuffixList: t.SuffixList}
			if len(binds) > 0 {
				body := &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIf, If: t.If}}
				for i := len(binds) - 1; i >= 0; i-- {
					body = &gojq.Query{Left: binds[i], Patterns: []*gojq.Pattern{{Name: names[i]}}, Op: gojq.OpPipe, Right: body}
				}
				*t = gojq.Term{Type: gojq.TermTypeQuery, Query: body, SuffixList: t.SuffixList}
			}
		}
	}
	walkQ(q)
	return err
}

// checkIndex makes the index of `.[n]` pass _h_idx first (slices clamp
// their bounds to the value's length, so they need no check).
func checkIndex(x *gojq.Index) {
	if x.IsSlice || x.Start == nil {
		return
	}
	x.Start = &gojq.Query{Left: x.Start, Op: gojq.OpPipe,
		Right: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "_h_idx"}}}}
}

// costGuard rewrites a call of one of costFuncs, F or F(A), as
// `if _h_cost("F") then F else empty end`, or with its argument bound first
// (so that it is evaluated once): `A as $x | if _h_cost("F"; $x) then F($x)
// else empty end`. The term's suffixes apply to the whole.
func costGuard(t *gojq.Term) {
	name := t.Func.Name
	lit := &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeString, Str: &gojq.String{Str: name}}}
	condArgs := []*gojq.Query{lit}
	call := &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: name}}
	var arg *gojq.Query
	if len(t.Func.Args) == 1 {
		arg = t.Func.Args[0]
		ref := &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "$__h_arg"}}}
		condArgs = append(condArgs, ref)
		call.Func.Args = []*gojq.Query{ref}
	}
	body := &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIf, If: &gojq.If{
		Cond: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "_h_cost", Args: condArgs}}},
		Then: &gojq.Query{Term: call},
		Else: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "empty"}}},
	}}}
	if arg != nil {
		body = &gojq.Query{Left: arg, Patterns: []*gojq.Pattern{{Name: "$__h_arg"}}, Op: gojq.OpPipe, Right: body}
	}
	*t = gojq.Term{Type: gojq.TermTypeQuery, Query: body, SuffixList: t.SuffixList}
}

// argGuarded names the builtins whose arguments' values are compared. The
// keys of sort_by, group_by, unique_by, min_by and max_by are not among
// them: their definitions (preludeDefs) check all the keys at once with
// _h_keys, which bounds the whole; a check of each key on its own walked
// every key in full first, n keys times a key's size (1e10 values for
// 1e5 keys of 1e5 values each) before the whole's bound was reached.
var argGuarded = map[string]bool{
	"contains": true, "inside": true, "indices": true, "index": true, "rindex": true,
}

// regexFuncs names jq's regular expression builtins that list matches, by
// arity: the indexes of their regexp and flags arguments (-1: none). They
// compute each match's offset from the start of the string, in one call
// the deadline cannot interrupt, so a call is checked first (_h_reok).
var regexFuncs = map[string]map[int][2]int{
	"match":   {1: {0, -1}, 2: {0, 1}},
	"capture": {1: {0, -1}, 2: {0, 1}},
	"scan":    {1: {0, -1}, 2: {0, 1}},
	"splits":  {1: {0, -1}, 2: {0, 1}},
	"split":   {2: {0, 1}},
	"sub":     {2: {0, -1}, 3: {0, 2}},
	"gsub":    {2: {0, -1}, 3: {0, 2}},
	"test":    {1: {0, -1}, 2: {0, 1}},
}

// regexWork bounds matches times the string's length in characters for one
// call of a regexFuncs builtin.
const regexWork = 1 << 26

// Bounds of the regular expressions a jq program uses. Go's matcher takes
// time up to the compiled expression's size times the string's length (a
// regexp of 40,000 characters ran 11 s on a string of 20,000), in one call
// the deadline cannot interrupt, so that product is bounded by
// regexInstWork; and gojq keeps every regexp a program has compiled for as
// long as the program lives (every later run included), so a program may
// use at most maxRegexps different ones, of maxRegexpBytes each and
// maxRegexpTotal in all.
const (
	regexInstWork  = 1 << 28
	maxRegexpBytes = 16 << 10
	maxRegexps     = 1024
	maxRegexpTotal = 64 << 10
)

// regexps is what a compiled program has seen of regexps: the size of each
// one's compiled form (gojq's flags applied), and their total length.
type regexps struct {
	mu    sync.Mutex
	insts map[[2]string]int
	bytes int
}

// size is the number of instructions of rs compiled with gojq's flags (0
// when it does not compile: gojq reports it), or an error when the program
// may not use one more regexp.
func (r *regexps) size(rs, fs string) (int, error) {
	if len(rs) > maxRegexpBytes {
		return 0, fmt.Errorf("a regular expression is %d bytes, more than %d", len(rs), maxRegexpBytes)
	}
	key := [2]string{rs, fs}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n, ok := r.insts[key]; ok {
		return n, nil
	}
	if len(r.insts) >= maxRegexps || r.bytes+len(rs) > maxRegexpTotal {
		return 0, fmt.Errorf("a jq program may use at most %d different regular expressions, of %d bytes in all (gojq keeps each one compiled)", maxRegexps, maxRegexpTotal)
	}
	if r.insts == nil {
		r.insts = map[[2]string]int{}
	}
	src := rs
	if strings.ContainsRune(fs, 'i') {
		src = "(?i)" + src
	}
	if strings.ContainsRune(fs, 'm') {
		src = "(?s)" + src
	}
	n := regexInsts(src)
	r.insts[key] = n
	r.bytes += len(rs)
	return n, nil
}

// regexInsts is the size of src's compiled program, the factor of the
// string's length in what Go's matcher may take (0 when src does not
// compile).
func regexInsts(src string) int {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return 0
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0
	}
	return len(prog.Inst)
}

// reOK is _h_reok: whether a regexFuncs call on s stays within the bounds:
// its regexp's size times the string's length within regexInstWork, and
// (for the builtins that list every match) its matches times the string's
// length within regexWork. An invalid regexp passes, and gojq reports it.
func (r *regexps) reOK(v any, re, flags any, name any) any {
	s, ok := v.(string)
	if !ok {
		return true
	}
	if a, ok := re.([]any); ok && len(a) == 2 {
		re, flags = a[0], a[1]
	}
	rs, ok := re.(string)
	if !ok {
		return true
	}
	fs, _ := flags.(string)
	insts, err := r.size(rs, fs)
	if err != nil {
		return err
	}
	n := utf8.RuneCountInString(s)
	if insts*(n+1) > regexInstWork {
		return &LimitError{Limit: "jqWork", Max: JQWork, What: fmt.Sprintf("%v with a regular expression of %d instructions on a string of %d characters", name, insts, n)}
	}
	if len(s) < 1024 || name == "test" {
		return true // (test finds one match, even with the g flag)
	}
	switch name {
	case "scan", "splits", "split", "gsub":
	default:
		if !strings.ContainsRune(fs, 'g') {
			return true // one match at most
		}
	}
	if strings.ContainsRune(fs, 'i') {
		rs = "(?i)" + rs
	}
	if strings.ContainsRune(fs, 'm') {
		rs = "(?s)" + rs
	}
	c, err := regexp.Compile(rs)
	if err != nil {
		return true
	}
	most := regexWork / n
	if len(c.FindAllStringIndex(s, most+1)) > most {
		return fmt.Errorf("%v on a string of %d characters would find more than %d matches (use the regex step for long texts)", name, n, most)
	}
	return true
}

// guarded is `q | if _h_ok then . else empty end`.
func guarded(q *gojq.Query) *gojq.Query {
	return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeQuery, Query: &gojq.Query{Left: q, Op: gojq.OpPipe,
		Right: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIf, If: &gojq.If{
			Cond: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "_h_ok"}}},
			Then: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIdentity}},
			Else: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "empty"}}},
		}}}}}}
}

// walkStr hardens the interpolations of a string: each is turned into text
// by a recursive encoder, so its value is checked first.
func walkStr(s *gojq.String, walkQ func(*gojq.Query)) {
	if s == nil {
		return
	}
	for i, q := range s.Queries {
		walkQ(q)
		if q.Term != nil && q.Term.Str != nil {
			continue // a literal part
		}
		s.Queries[i] = guarded(q)
	}
}

// recursing names the builtins implemented by Go recursion over their input
// (encoders and comparisons), which check its nesting and size first.
var recursing = map[string]bool{
	"tojson": true, "tostring": true, "flatten": true, "sort": true, "sort_by": true, "group_by": true,
	"unique": true, "unique_by": true, "min": true, "max": true, "min_by": true, "max_by": true,
	"contains": true, "inside": true, "indices": true, "index": true, "rindex": true,
	"setpath": true, "delpaths": true, "getpath": true, "halt_error": true, "ascii": true, "implode": true,
	"format": true, "bsearch": true,
}

// jqOptions are the hardening functions, bound to the limits.
func (lim *Limits) jqOptions() []gojq.CompilerOption {
	maxStr, maxDepth := lim.StringBytes, lim.Depth
	cmp := func(name string, ok func(int) bool) gojq.CompilerOption {
		return gojq.WithFunction(name, 2, 2, func(_ any, a []any) any {
			if err := cmpOK(a[0], a[1], maxDepth); err != nil {
				return err
			}
			return ok(gojq.Compare(a[0], a[1]))
		})
	}
	res := &regexps{} // one per compiled program: gojq's cache is
	clock := lim.Clock
	if clock == nil {
		clock = time.Now
	}
	return []gojq.CompilerOption{
		gojq.WithEnvironLoader(func() []string { return nil }),
		gojq.WithFunction("_h_now", 0, 0, func(any, []any) any {
			return float64(clock().UnixNano()) / 1e9
		}),
		gojq.WithFunction("_h_add", 2, 2, func(_ any, a []any) any { return add(a[0], a[1], maxStr) }),
		gojq.WithFunction("_h_mul", 2, 2, func(_ any, a []any) any { return mul(a[0], a[1], maxStr, maxDepth) }),
		gojq.WithFunction("_h_sub", 2, 2, func(_ any, a []any) any { return sub(a[0], a[1], maxDepth) }),
		gojq.WithFunction("_h_div", 2, 2, func(_ any, a []any) any { return div(a[0], a[1], maxStr) }),
		gojq.WithFunction("_h_idx", 0, 0, func(v any, _ []any) any {
			if err := idxOK(v, maxStr); err != nil {
				return err
			}
			return v
		}),
		gojq.WithFunction("_h_cost", 1, 2, func(v any, a []any) any {
			name, _ := a[0].(string)
			if err := costOK(name, v, a[1:], maxStr, maxDepth); err != nil {
				return err
			}
			return true
		}),
		cmp("_h_eq", func(c int) bool { return c == 0 }),
		cmp("_h_ne", func(c int) bool { return c != 0 }),
		cmp("_h_lt", func(c int) bool { return c < 0 }),
		cmp("_h_gt", func(c int) bool { return c > 0 }),
		cmp("_h_le", func(c int) bool { return c <= 0 }),
		cmp("_h_ge", func(c int) bool { return c >= 0 }),
		gojq.WithFunction("_h_ok", 0, 0, func(v any, _ []any) any {
			if err := checkValue(v, maxDepth, 4*maxStr); err != nil {
				return err
			}
			return true
		}),
		gojq.WithFunction("_h_reok", 3, 3, func(v any, a []any) any { return res.reOK(v, a[0], a[1], a[2]) }),
		gojq.WithFunction("_h_keys", 1, 1, func(v any, a []any) any {
			// The keys of sort_by, group_by, ..., as a whole: the
			// builtin compares them in one call (twice the bound of
			// sort's input: each key is wrapped in an array).
			if err := checkValue(v, maxDepth, 8*maxStr); err != nil {
				var le *LimitError
				if errors.As(err, &le) {
					le.What = fmt.Sprintf("the keys %v compares: %s", a[0], le.What)
				}
				return err
			}
			return v
		}),
		gojq.WithFunction("_h_bessel", 3, 3, func(_ any, a []any) any {
			name, _ := a[0].(string)
			return bessel(name, a[1], a[2])
		}),
		gojq.WithFunction("_h_fromjson", 0, 0, func(v any, _ []any) any {
			s, ok := v.(string)
			if !ok {
				return runOne(fromjsonCode, v) // gojq's own error
			}
			w, err := DecodeJSON([]byte(s), maxDepth)
			var le *LimitError
			if errors.As(err, &le) {
				return err
			}
			if err != nil {
				return runOne(fromjsonCode, v) // gojq's own message
			}
			return w
		}),
		gojq.WithFunction("_h_numok", 0, 0, func(v any, _ []any) any {
			// tonumber parses a long integer exactly, in time quadratic
			// in its length that no deadline interrupts.
			if s, ok := v.(string); ok && len(s) > MaxIntegerDigits {
				return fmt.Errorf("tonumber of a string of more than %d characters", MaxIntegerDigits)
			}
			return true
		}),
		gojq.WithFunction("_h_path", 1, 1, func(_ any, a []any) any {
			if err := pathOK(a[0], maxStr, maxDepth); err != nil {
				return err
			}
			return a[0]
		}),
		gojq.WithFunction("_h_paths", 1, 1, func(_ any, a []any) any {
			if ps, ok := a[0].([]any); ok {
				for _, p := range ps {
					if err := pathOK(p, maxStr, maxDepth); err != nil {
						return err
					}
				}
			}
			return a[0]
		}),
	}
}

var (
	addCode = mustCode(".[0] + .[1]")
	mulCode = mustCode(".[0] * .[1]")
)

func mustCode(src string) *gojq.Code {
	q, err := gojq.Parse(src)
	if err != nil {
		panic(err)
	}
	c, err := gojq.Compile(q)
	if err != nil {
		panic(err)
	}
	return c
}

var fromjsonCode = mustCode("fromjson")

func runOne(c *gojq.Code, v any) any {
	r, _ := c.Run(v).Next()
	return r
}

func runPair(c *gojq.Code, l, r any) any {
	v, _ := c.Run([]any{l, r}).Next()
	return v
}

func add(l, r any, maxStr int) any {
	switch l := l.(type) {
	case nil:
		return r
	case string:
		if r, ok := r.(string); ok {
			if len(l)+len(r) > maxStr {
				return &LimitError{Limit: "string", Max: int64(maxStr), What: "a jq string"}
			}
			return l + r
		}
	case []any:
		if r, ok := r.([]any); ok && len(l)+len(r) > maxStr/8 {
			return &LimitError{Limit: "string", Max: int64(maxStr / 8), What: "a jq array's length"}
		}
	case int:
		switch r := r.(type) {
		case int:
			if v := l + r; (v >= l) == (r >= 0) {
				return v
			}
		case float64:
			return float64(l) + r
		}
	case float64:
		switch r := r.(type) {
		case int:
			return l + float64(r)
		case float64:
			return l + r
		}
	}
	if r == nil {
		return l
	}
	return runPair(addCode, l, r)
}

// maxIntBits bounds the integers jq's * makes.
const maxIntBits = 1 << 16

// intBits is the size in bits of an integer value, 0 for anything else.
func intBits(v any) int {
	switch x := v.(type) {
	case int:
		return 64
	case *big.Int:
		return x.BitLen()
	}
	return 0
}

func mul(l, r any, maxStr, maxDepth int) any {
	rep := func(s string, n any) any {
		f, ok := gojq.ToFloat64(n)
		if ok && f > 0 && float64(len(s))*f > float64(maxStr) {
			return &LimitError{Limit: "string", Max: int64(maxStr), What: "a repeated jq string"}
		}
		return nil
	}
	if s, ok := l.(string); ok {
		if err := rep(s, r); err != nil {
			return err
		}
	}
	if s, ok := r.(string); ok {
		if err := rep(s, l); err != nil {
			return err
		}
	}
	if _, ok := l.(map[string]any); ok {
		// A deep merge walks both objects.
		if err := sized(l, JQWork, maxDepth, "merging objects with *"); err != nil {
			return err
		}
		if err := sized(r, JQWork, maxDepth, "merging objects with *"); err != nil {
			return err
		}
	}
	if lb, rb := intBits(l), intBits(r); lb > 0 && rb > 0 && lb+rb > maxIntBits {
		// One multiplication of huge integers, and printing its
		// result, take time no deadline can interrupt.
		return fmt.Errorf("a jq integer would have more than %d bits", maxIntBits)
	}
	switch l := l.(type) {
	case int:
		if r, ok := r.(int); ok {
			if l == 0 || r == 0 {
				return 0
			}
			if v := l * r; v/r == l && !(l == -1 && r == -1<<63) && !(r == -1 && l == -1<<63) {
				return v
			}
			x, y := big.NewInt(int64(l)), big.NewInt(int64(r))
			return x.Mul(x, y)
		}
	case float64:
		if r, ok := r.(float64); ok {
			return l * r
		}
	}
	return runPair(mulCode, l, r)
}

// CompileStandalone compiles a jq program that sees no variables, hardened
// as a step's programs are, for a host that runs programs outside a tool
// (a test case's assertions). Its problems are reported at pos.
func CompileStandalone(src string, lim *Limits, pos diag.Pos, l *diag.List) *JQ {
	return compileJQ(src, NewScope(), lim, func(int) diag.Pos { return pos }, l)
}

// Run1 runs a program compiled by CompileStandalone on v, within ctx: its
// first result, and whether it gave one.
func (q *JQ) Run1(ctx context.Context, v any) (any, bool, error) {
	run := ctx
	if c, ok := ctx.(*deadlineCtx); ok && c.heap > 0 {
		run = &jqWatch{Context: ctx, call: c} // WatchHeap's: checked as a call's
	}
	r, ok := q.code.RunWithContext(run, v).Next()
	if !ok {
		return nil, false, nil
	}
	if err, isErr := r.(error); isErr {
		return nil, true, jqError(ctx, err, nil)
	}
	return r, true, nil
}
