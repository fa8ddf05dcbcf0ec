package steps_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/itchyny/gojq"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builtinCase is a hostile use of a builtin of steps.JQBuiltins, as a
// document's jq under the default limits, with what must stop it: the lint
// error (FILE:LINE:COL: message) or the run's error (run in a child
// process by TestJQBuiltinsHostile, within bounded time and memory).
type builtinCase struct {
	builtin string // a name of JQBuiltins
	src     string
	lint    string
	err     string
	short   bool // the deadline (2 s) is what stops it
}

var builtinCases = []builtinCase{
	{builtin: "input/0", src: `input`, lint: "tools/tool.yaml:4:10: jq: input(s)/0 is not allowed"},
	{builtin: "inputs/0", src: `[inputs]`, lint: "tools/tool.yaml:4:10: jq: input(s)/0 is not allowed"},
	{builtin: "debug/1", src: `1 | debug("x")`, lint: "tools/tool.yaml:4:14: jq: function not defined: debug/1"},
	{builtin: "debug/1", src: `1 | $__loc__`, lint: "tools/tool.yaml:4:14: unknown variable $__loc__"},
	{builtin: "debug/1", src: `1 | input_filename`, lint: "tools/tool.yaml:4:14: jq: function not defined: input_filename/0"},
	{builtin: "fromjson/0", src: `"1" * 8000000 | fromjson | . + 1 | error(tostring | length | tostring)`, err: "jq error: 23"},
	{builtin: "fromjson/0", src: `"[" * 300 + "]" * 300 | fromjson`, err: "the JSON's nesting is over the depth limit of 256"},
	{builtin: "bsearch/1", src: `reduce range(40) as $i ([]; [., .]) as $d | [1] | bsearch($d)`, err: "over the jqWork limit"},
	{builtin: "indices/1", src: `"a" * 1000000 | indices("a" * 1000 + "b")`, err: "over the jqWork limit"},
	{builtin: "join/1", src: `("x" * 8000000) as $s | [range(1000) | $s] | join(",")`, err: "a jq string made by join is over the string limit"},
	{builtin: "add/0", src: `[range(2000)] as $a | [range(1000) | $a] | add | length`, err: "a jq array made by add is over the string limit"},
	{builtin: "tojson/0", src: `reduce range(40) as $i ([]; [., .]) | tojson`, err: "a value's size for an encoder or comparison is over the string limit"},
	{builtin: "tostring/0", src: `reduce range(40) as $i ([]; [., .]) | tostring`, err: "a value's size for an encoder or comparison is over the string limit"},
	{builtin: "@base64", src: `reduce range(40) as $i ("x"; [., .]) | @base64`, err: "a value's size for an encoder or comparison is over the string limit"},
	{builtin: "halt_error/1", src: `reduce range(40) as $i ([]; [., .]) | halt_error(1)`, err: "a value's size for an encoder or comparison is over the string limit"},
	{builtin: "implode/0", src: `reduce range(300) as $i (65; [.]) | implode`, err: "a value's nesting is over the depth limit"},
	{builtin: "sort_by/1", src: `[range(1e5)] as $a | [range(1000)] | sort_by($a) | length`, err: "the keys sort_by compares"},
	{builtin: "group_by/1", src: `[range(1e5)] as $a | [range(1000)] | group_by($a) | length`, err: "the keys group_by compares"},
	{builtin: "unique_by/1", src: `[range(1e5)] as $a | [range(1000)] | unique_by($a) | length`, err: "the keys unique_by compares"},
	{builtin: "min_by/1", src: `[range(1e5)] as $a | [range(1000)] | min_by($a)`, err: "the keys min_by compares"},
	{builtin: "max_by/1", src: `[range(1e5)] as $a | [range(1000)] | max_by($a)`, err: "the keys max_by compares"},
	// Many keys, each far under the limit alone: the keys' whole is what
	// stops them, before, each key was walked on its own first (1e10 values).
	{builtin: "sort_by/1", src: `[range(1e5)] as $a | [range(1e5)] | sort_by($a) | length`, err: "the keys sort_by compares"},
	{builtin: "max_by/1", src: `[range(1e5)] as $a | [range(1e5)] | max_by($a)`, err: "the keys max_by compares"},
	{builtin: "setpath/2", src: `null | .[536870000] = 1`, err: "the array index 536870000 is over the string limit"},
	{builtin: "pick/1", src: `null | pick(.[536870000])`, err: "the array index 536870000 is over the string limit"},
	{builtin: "del/1", src: `[1] | del(.[536870000])`, err: "the array index 536870000 is over the string limit"},
	{builtin: "getpath/1", src: `[range(300) | 0] as $p | null | getpath($p)`, err: "a path is over the depth limit of 256"},
	{builtin: "test/1", src: `("a?" * 4000 + "a" * 4000) as $r | "a" * 100000 | test($r)`, err: "test with a regular expression of 12002 instructions on a string of 100000 characters is over the jqWork limit"},
	{builtin: "test/1", src: `("a?" * 20000) as $r | "a" | test($r)`, err: "a regular expression is 40000 bytes, more than 16384"},
	{builtin: "test/1", src: `[range(2000) | tostring as $n | "a" | test("b\($n)c")] | length`, err: "a jq program may use at most 1024 different regular expressions"},
	{builtin: "capture/1", src: `("(a?)" * 3000) as $r | "a" * 100000 | capture($r)`, err: "capture with a regular expression of"},
	{builtin: "match/2", src: `"a" * 1000000 | [match("a"; "g")] | length`, err: "would find more than 67 matches"},
	{builtin: "tonumber/0", src: `"1" * 2000 | tonumber`, err: "tonumber of a string of more than 1000 characters"},
	{builtin: "jn/2", src: `jn(2e9; 3e9)`, err: "jn of order 2000000000 (at most 1048576) is over the jqWork limit"},
	{builtin: "yn/2", src: `yn(1e8; 1e9)`, err: "yn of order 100000000 (at most 1048576) is over the jqWork limit"},
	{builtin: "error/1", src: `error("x" * 8000000)`, err: "(the message's 8000000 bytes were cut to 4096)"},
	{builtin: "error/1", src: `reduce range(40) as $i ([]; [., .]) | error(.)`, err: "jq: error (not a string): [[[["},
	{builtin: "limit/2", src: `[limit(1e9; repeat(1))] | length`, err: "over the deadline limit", short: true},
	{builtin: "range/1", src: `last(range(1e12))`, err: "over the deadline limit", short: true},
	{builtin: "combinations/1", src: `[range(30) | [0, 1]] | [combinations] | length`, err: "over the deadline limit", short: true},
}

// TestJQBuiltinsTable: steps.JQBuiltins names every builtin gojq offers
// (its builtins list, its formats and $ENV) exactly once, and every row that
// is not plain has a hostile case in builtinCases.
func TestJQBuiltinsTable(t *testing.T) {
	q, err := gojq.Parse("builtins")
	require.NoError(t, err)
	code, err := gojq.Compile(q)
	require.NoError(t, err)
	v, _ := code.Run(nil).Next()
	var want []string
	for _, x := range v.([]any) {
		want = append(want, x.(string))
	}
	// The formats (gojq lists them nowhere): each runs, and a format
	// not in the list does not.
	formats := []string{"@text", "@json", "@html", "@uri", "@urid", "@csv", "@tsv", "@sh", "@base64", "@base64d"}
	for _, f := range append(formats, "@base32", "@base32d", "@yaml") {
		in := `"YQ=="`
		if f == "@csv" || f == "@tsv" {
			in = `["YQ=="]`
		}
		q, err := gojq.Parse(in + " | " + f)
		require.NoError(t, err)
		code, err := gojq.Compile(q)
		if err == nil {
			v, _ := code.Run(nil).Next()
			err, _ = v.(error)
		}
		assert.Equal(t, !strings.HasPrefix(f, "@base32") && f != "@yaml", err == nil, "%s: %v", f, err)
	}
	want = append(append(want, formats...), "$ENV")
	row := map[string]steps.JQBuiltin{}
	var got []string
	for _, r := range steps.JQBuiltins {
		for _, n := range r.Names {
			_, dup := row[n]
			assert.False(t, dup, "%s is in two rows", n)
			row[n] = r
			got = append(got, n)
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	assert.Equal(t, want, got, "steps.JQBuiltins must name every gojq builtin once")
	covered := map[string]bool{}
	for _, c := range builtinCases {
		r, ok := row[c.builtin]
		require.True(t, ok, "case %q names %s, not in JQBuiltins", c.src, c.builtin)
		covered[r.Names[0]] = true
		assert.NotEqual(t, c.lint == "", c.err == "", "case %q needs a lint error or a run error", c.src)
		if c.lint != "" {
			assert.Equal(t, steps.JQRefused, r.How, "case %q: lint cases are for refused builtins", c.src)
		}
	}
	for _, r := range steps.JQBuiltins {
		if r.How != steps.JQPlain && r.How != steps.JQEngine {
			assert.True(t, covered[r.Names[0]], "no hostile case for the %s row %v", r.How, r.Names)
		}
	}
}

// TestJQBuiltinsLint: the refused builtins fail lint, with their position.
func TestJQBuiltinsLint(t *testing.T) {
	for _, c := range builtinCases {
		if c.lint == "" {
			continue
		}
		_, l := compileTool(t, c.src)
		require.True(t, l.HasErrors(), c.src)
		assert.Contains(t, l.Error(), c.lint, c.src)
	}
}

func compileTool(t *testing.T, src string) (*interpreter.Program, diag.List) {
	t.Helper()
	q, err := json.Marshal(src)
	require.NoError(t, err)
	p, l := manifest.Parse(manifest.Files{
		"PLUGIN.md":       []byte("---\nid: hostile\nname: Hostile\ndescription: A test document.\nversion: 1.0.0\n---\nInstructions.\n"),
		"tools/tool.yaml": []byte("description: T.\neffect: read\nsteps:\n  - jq: " + string(q) + "\n"),
	})
	require.False(t, l.HasErrors(), "%s", l.Error())
	prog, l := interpreter.Compile(p)
	return prog, l
}

// TestJQBuiltinsEngine: the engine's builtins give nothing of the host: the
// environment is empty, now is the engine's clock, and fromjson reads a long
// integer as a float at once; a long error message is cut.
func TestJQBuiltinsEngine(t *testing.T) {
	t.Setenv("HARNESS_SECRET_FOR_TEST", "s3cret")
	lim := steps.DefaultLimits()
	lim.Clock = func() time.Time { return time.Unix(1700000000, 0) }
	run := func(src string) (any, error) {
		var l diag.List
		q := steps.CompileStandalone(src, &lim, diag.Pos{}, &l)
		require.False(t, l.HasErrors(), "%s: %s", src, l.Error())
		v, _, err := q.Run1(context.Background(), nil)
		return v, err
	}
	v, err := run(`[$ENV, env, $ENV.HOME, env.HARNESS_SECRET_FOR_TEST, ($ENV | length)]`)
	require.NoError(t, err)
	assert.Equal(t, []any{map[string]any{}, map[string]any{}, nil, nil, 0}, v)
	v, err = run(`now`)
	require.NoError(t, err)
	assert.Equal(t, 1700000000.0, v)
	start := time.Now()
	v, err = run(`"1" * 4000000 | fromjson | [type, . > 1e300]`)
	took := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, []any{"number", true}, v)
	if !raceEnabled {
		assert.Less(t, took, time.Second)
	}
	// The number is a float64, not gojq's exact (quadratic) *big.Int:
	// the engine's decoder read it, whatever the machine's speed.
	v, err = run(`"1" * 4000000 | fromjson`)
	require.NoError(t, err)
	assert.IsType(t, float64(0), v)
	v, err = run(`"{\"a\": [1, 2.5, 123456789012345678901234567890]}" | fromjson | .a[2] | tostring`)
	require.NoError(t, err)
	assert.Equal(t, "123456789012345678901234567890", v)
	_, err = run(`"{" | fromjson`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fromjson")
	_, err = run(`error("é" * 5000)`)
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 4200)
	assert.Contains(t, err.Error(), "(the message's 10000 bytes were cut to 4096)")
	assert.True(t, strings.HasPrefix(err.Error(), "jq error: éé"))
}

// TestJQBuiltinsDocs: docs/plugin-format.md holds JQBuiltinsMarkdown
// between the jqbuiltins markers (go test ./steps -update rewrites it).
func TestJQBuiltinsDocs(t *testing.T) {
	path := filepath.Join("..", "docs", "plugin-format.md")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(b)
	want := between(t, doc, "jqbuiltins", steps.JQBuiltinsMarkdown())
	if *update && want != doc {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		doc = want
	}
	assert.Equal(t, want, doc, "docs/plugin-format.md is out of date: go test ./steps -update")
}
