package steps_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/itchyny/gojq"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jqConstruct is a jq program with a hole (%[1]s) in one of the places of
// jq's grammar that hold a query. runs: evaluating the program evaluates
// the hole and an error there is the program's (not caught by try or ?).
type jqConstruct struct {
	src  string
	runs bool
}

// jqConstructs put the hole in every part of gojq's AST that holds a query
// (TestJQConstructsCoverTheAST checks that none is missing).
var jqConstructs = []jqConstruct{
	{`%[1]s`, true},
	{`(%[1]s)`, true},
	{`1 as $x | %[1]s`, true},
	{`(%[1]s) as $x | $x`, true},
	{`1 + ((%[1]s) | length)`, true},
	{`-((%[1]s) | length)`, true},
	{`[%[1]s]`, true},
	{`{a: (%[1]s)}`, true},
	{`{(%[1]s): 1}`, true},
	{`{"\(%[1]s)": 1}`, true},
	{`{"a\(%[1]s)b": 1}`, true},
	{`"\(%[1]s)"`, true},
	{`@base64 "x\(%[1]s)"`, true},
	{`@json "\(%[1]s)"`, true},
	// Destructuring: the keys of object patterns are queries.
	{`{"k": 1} as {(%[1]s): $x} | $x`, true},
	{`{"k": 1} as {"\(%[1]s)": $x} | $x`, true},
	{`{"k": 1} as {"a\(%[1]s)": $x} | $x`, true},
	{`[{"k": 1}] as [{(%[1]s): $x}] | $x`, true},
	{`[[{"k": 1}]] as [[$a, {(%[1]s): $x}]] | $x`, true},
	{`{"a": {"k": 1}} as {a: {(%[1]s): $x}} | $x`, true},
	{`{"a": {"k": 1}} as {$a: {(%[1]s): $x}} | $x`, true},
	{`{"k": 1} as [$x] ?// {(%[1]s): $x} | $x`, true},
	{`{"k": 1} as [$x] ?// [$x] ?// {(%[1]s): $x} | $x`, true},
	{`reduce ({"k": 1}) as {(%[1]s): $x} (0; . + $x)`, true},
	{`reduce ([1, {"k": 2}]) as [$a, {(%[1]s): $x}] (0; . + $x)`, true},
	{`foreach ({"k": 1}) as {(%[1]s): $x} (0; . + $x; .)`, true},
	{`foreach ({"k": 1}) as [$x] ?// {"\(%[1]s)": $x} (0; . + $x)`, true},
	{`reduce (%[1]s) as $x (0; .)`, true},
	{`reduce 1 as $x (%[1]s; .)`, true},
	{`reduce 1 as $x (0; %[1]s)`, true},
	{`foreach (%[1]s) as $x (0; .)`, true},
	{`foreach 1 as $x (%[1]s; .)`, true},
	{`foreach 1 as $x (0; %[1]s)`, true},
	{`foreach 1 as $x (0; .; %[1]s)`, true},
	{`label $out | %[1]s`, true},
	{`label $out | (%[1]s), break $out`, true},
	{`def f: %[1]s; f`, true},
	{`def f(g): g; f(%[1]s)`, true},
	{`def f($v): $v; f(%[1]s)`, true},
	{`def f: def g: %[1]s; g; f`, true},
	{`try (%[1]s)`, false},
	{`try error("e") catch (%[1]s)`, true},
	{`(%[1]s)?`, false},
	{`[.[]?, (%[1]s)]`, true},
	{`if (%[1]s) then 1 else 2 end`, true},
	{`if true then (%[1]s) else 1 end`, true},
	{`if false then 1 elif (%[1]s) then 2 else 3 end`, true},
	{`if false then 1 elif true then (%[1]s) else 3 end`, true},
	{`if false then 1 else (%[1]s) end`, true},
	{`if false then 1 end | (%[1]s)`, true},
	{`{"k": 1} | .[%[1]s]`, true},
	{`"abc" | .[((%[1]s) | length):]`, true},
	{`"abc" | .[:((%[1]s) | length)]`, true},
	{`{"k": 1} | ."\(%[1]s)"`, true},
	{`{"a": {"k": 1}} | .a[%[1]s]`, true},
	{`{"a": {"k": 1}} | .a."\(%[1]s)"`, true},
	{`{"a": {"k": 1}} | .a?[%[1]s]`, true},
	{`[[1]] | .[0][((%[1]s) | length):]`, true},
	{`{"a": [1]} | .a[] as $v | [$v, %[1]s]`, true},
	{`[limit(1; %[1]s)]`, true},
	{`{"k": 1} | path(.[%[1]s])`, true},
	{`{"k": 1} | .[%[1]s] |= 2`, true},
	{`{"k": 1} | .[%[1]s] += 2`, true},
	{`(%[1]s) // 1`, true},
}

// A key made too long for the string limit by jq's `*`: the hardening
// refuses it when it sees it.
func bigKey(lim steps.Limits) string { return fmt.Sprintf(`("k" * %d)`, lim.StringBytes+1) }

func compileJQ(t *testing.T, src string, lim steps.Limits) (*steps.JQ, *diag.List) {
	t.Helper()
	var l diag.List
	q := steps.CompileStandalone(src, &lim, diag.Pos{File: "t.yaml", Line: 3, Col: 7}, &l)
	return q, &l
}

// TestJQChecksReachEveryConstruct: whatever part of a program holds a
// query (destructuring patterns and their computed keys, reduce and
// foreach patterns, definitions, try, labels, formats, string
// interpolation, object keys, indexes), the static checks see it: a call
// of one of jq's internal functions, a definition of a reserved name, and
// (run) a string too long for the string limit.
func TestJQChecksReachEveryConstruct(t *testing.T) {
	lim := steps.DefaultLimits()
	for _, c := range jqConstructs {
		t.Run(c.src, func(t *testing.T) {
			plain := fmt.Sprintf(c.src, `"k"`)
			if _, err := gojq.Parse(plain); err != nil {
				t.Skipf("not jq: %v", err)
			}
			q, l := compileJQ(t, plain, lim)
			require.False(t, l.HasErrors(), "%s: %s", plain, l.Error())
			_, _, err := q.Run1(context.Background(), nil)
			require.NoError(t, err, plain)

			_, l = compileJQ(t, fmt.Sprintf(c.src, `_multiply("k"; 1)`), lim)
			require.True(t, l.HasErrors(), "internal function not seen")
			assert.Contains(t, l.Error(), "t.yaml:3:7: jq: _multiply is internal to jq")

			_, l = compileJQ(t, fmt.Sprintf(c.src, `(def _h_k: "k"; _h_k)`), lim)
			require.True(t, l.HasErrors(), "reserved definition not seen")
			assert.Contains(t, l.Error(), "t.yaml:3:7: jq function names starting with _h_ are reserved")

			if c.runs {
				src := fmt.Sprintf(c.src, bigKey(lim))
				q, l := compileJQ(t, src, lim)
				require.False(t, l.HasErrors(), "%s", l.Error())
				_, _, err := q.Run1(context.Background(), nil)
				require.Error(t, err, "a %d-byte string was made", lim.StringBytes+1)
				assert.Contains(t, err.Error(), "a repeated jq string is over the string limit")
			}
		})
	}
}

// queryFields lists every field of gojq's AST types (from Query down)
// whose value can hold a query, as "Type.Field".
func queryFields() []string {
	elem := func(t reflect.Type) reflect.Type {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		return t
	}
	// Every struct type below Query.
	queryT := reflect.TypeFor[gojq.Query]()
	var types []reflect.Type
	seen := map[reflect.Type]bool{}
	var find func(reflect.Type)
	find = func(t reflect.Type) {
		t = elem(t)
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		types = append(types, t)
		for i := range t.NumField() {
			find(t.Field(i).Type)
		}
	}
	find(queryT)
	// Which of them hold a query, to a fixed point (the types are cyclic).
	holds := map[reflect.Type]bool{queryT: true}
	for changed := true; changed; {
		changed = false
		for _, t := range types {
			for i := range t.NumField() {
				if !holds[t] && holds[elem(t.Field(i).Type)] {
					holds[t], changed = true, true
				}
			}
		}
	}
	var out []string
	for _, t := range types {
		for i := range t.NumField() {
			if holds[elem(t.Field(i).Type)] {
				out = append(out, t.Name()+"."+t.Field(i).Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// holeFields are the fields on the path from a program's root to each
// call of __hole.
func holeFields(q *gojq.Query) map[string]bool {
	found := map[string]bool{}
	var path []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			if f, ok := v.Addr().Interface().(*gojq.Func); ok && f.Name == "__hole" {
				for _, p := range path {
					found[p] = true
				}
			}
			for i := range v.NumField() {
				path = append(path, v.Type().Name()+"."+v.Type().Field(i).Name)
				walk(v.Field(i))
				path = path[:len(path)-1]
			}
		}
	}
	walk(reflect.ValueOf(q))
	return found
}

// TestJQConstructsCoverTheAST: every field of gojq's AST that can hold a
// query holds the hole in one of jqConstructs, so that the checks of
// TestJQChecksReachEveryConstruct reach each of them (a gojq release with
// a new node fails here until a construct puts a hole in it).
func TestJQConstructsCoverTheAST(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range jqConstructs {
		q, err := gojq.Parse(fmt.Sprintf(c.src, "__hole"))
		if err != nil {
			continue
		}
		for f := range holeFields(q) {
			covered[f] = true
		}
	}
	fields := queryFields()
	require.Contains(t, fields, "PatternObject.KeyQuery")
	require.Contains(t, fields, "Reduce.Patterns")
	require.Contains(t, fields, "Pattern.Array")
	require.Contains(t, fields, "PatternObject.Val")
	require.Contains(t, fields, "Unary.Term")
	var missing []string
	for _, f := range fields {
		if !covered[f] {
			missing = append(missing, f)
		}
	}
	assert.Empty(t, missing, "no construct puts a query in these fields of gojq's AST")
}

// FuzzCompileJQ: the static checks and the hardening never panic on any
// program, their diagnostics stay at the program's position, and a
// program they accept runs within a short deadline without a panic.
func FuzzCompileJQ(f *testing.F) {
	for _, c := range jqConstructs {
		f.Add(fmt.Sprintf(c.src, `"k"`))
		f.Add(fmt.Sprintf(c.src, `_multiply("k"; 1)`))
	}
	for _, src := range ordinaryJQ {
		f.Add(src)
	}
	lim := steps.DefaultLimits()
	at := diag.Pos{File: "t.yaml", Line: 3, Col: 7}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4<<10 {
			return
		}
		var l diag.List
		q := steps.CompileStandalone(src, &lim, at, &l)
		for _, d := range l.Items {
			if d.Pos != at {
				t.Fatalf("diagnostic away from the program: %s", d)
			}
		}
		if q == nil {
			if !l.HasErrors() {
				t.Fatalf("no program and no error")
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50e6)
		defer cancel()
		_, _, err := q.Run1(ctx, map[string]any{"a": []any{1, "x"}})
		if err != nil && strings.ContainsRune(err.Error(), 0) {
			t.Fatalf("error with a NUL: %q", err)
		}
	})
}
