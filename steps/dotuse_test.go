package steps

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dotUseCases are programs and whether they may read the headers of
// their input.
var dotUseCases = map[string]bool{
	".body": false, ".body.rooms[] | .name": false, "[.body.rooms[] | {room: .name, seats: .capacity}]": false,
	"{building: $input.building, rooms: $prefs}": false, ".status == 200": false, "$input": false, "empty": false,
	".body as $b | $b": false, "if .status == 200 then .body else .url end": false, `"\(.status) \(.body)"`: false,
	"{body}": false, "{status, url}": false, "try .body catch .": false, ".status, .url": false, "(.body)": false,
	"(.).body": false, "-(.status)": false, "{(.url): 1}": false, ".body | length": false, ".body | keys": false,
	".url + .url": false, ".body.rooms[0]": false, "[.body.rooms[] | select(.capacity > 1)]": false,
	".headers": true, `.headers["content-type"]`: true, ".": true, "{r: .}": true, "keys": true, ".[]": true,
	"to_entries": true, ". as $r | $r.body": true, "if .status == 200 then .body end": true, `.["headers"]`: true,
	`."headers"`: true, ". + {}": true, "tojson": true, `"\(.)"`: true, "{headers}": true, ".body[.headers.x]": true,
	"reduce .body.rooms[] as $x (0; . + $x.capacity)": true, "def f: .; f": true, "..": true, "@json": true,
	"(.)": true, ".body // .": true, "[.[] | .x]": true, ". == {}": true, "length": true, `{"headers"}`: true,
	"[paths]": true, ".body | . as $x | $x": false, "{a: .body} | .a": false, "[.] | .[0].body": true,
}

// TestDotUse: what a program may read of `.` (here: the headers of a
// request's output), and for every program said not to read them, the
// same answer (or error) whether the headers are there or not.
func TestDotUse(t *testing.T) {
	lim := DefaultLimits()
	withHeaders, without := dotUseInputs()
	for src, want := range dotUseCases {
		sc := NewScope("input", "prefs")
		var l diag.List
		q := compileJQ(src, sc, &lim, func(int) diag.Pos { return diag.Pos{} }, &l)
		require.False(t, l.HasErrors(), "%s: %s", src, l.Error())
		assert.Equal(t, want, q.use.reads("headers"), "%s: %+v", src, q.use)
		if want {
			continue
		}
		answer := func(v any) string {
			f := &Frame{Vars: []any{map[string]any{"building": "x"}, nil}, Limits: &lim}
			r, err := q.First(context.Background(), f, v)
			return fmt.Sprintf("%#v %v", r, err)
		}
		assert.Equal(t, answer(withHeaders), answer(without), "%s reads the headers after all", src)
	}
}

// dotUseInputs are a request's output with its headers and without.
func dotUseInputs() (with, without map[string]any) {
	with = map[string]any{"status": 200, "url": "https://x.test/a", "body": map[string]any{"rooms": []any{
		map[string]any{"name": "a", "capacity": 1}, map[string]any{"name": "b", "capacity": 2}}},
		"headers": map[string]any{"content-type": "application/json", "x": "body"}}
	without = maps.Clone(with)
	delete(without, "headers")
	return with, without
}

// FuzzDotUse: a program the analysis says does not read the headers of
// its input answers the same with and without them (within a short
// deadline, on a fixed clock).
func FuzzDotUse(f *testing.F) {
	for src := range dotUseCases {
		f.Add(src)
	}
	lim := DefaultLimits()
	lim.Clock = func() time.Time { return time.Unix(1e9, 0) }
	withHeaders, without := dotUseInputs()
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<10 {
			return
		}
		var l diag.List
		q := compileJQ(src, NewScope("input", "prefs"), &lim, func(int) diag.Pos { return diag.Pos{} }, &l)
		if q == nil || q.use.reads("headers") {
			return
		}
		answer := func(v any) (string, bool) {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			f := &Frame{Vars: []any{map[string]any{"building": "x"}, nil}, Limits: &lim}
			r, err := q.First(ctx, f, v)
			return fmt.Sprintf("%#v %v", r, err), ctx.Err() == nil
		}
		a, ok1 := answer(withHeaders)
		b, ok2 := answer(without)
		if ok1 && ok2 && a != b {
			t.Fatalf("%s reads the headers: %s, without them %s (%+v)", src, a, b, q.use)
		}
	})
}

// TestSettleHeaders: a request leaves its output's headers out only when
// no later step can read them.
func TestSettleHeaders(t *testing.T) {
	compile := func(src string) Block {
		p, l := manifest.Parse(manifest.Files{
			"PLUGIN.md":       []byte("---\nid: case\nname: Case\ndescription: A test case.\nversion: 1.0.0\naccess:\n  web: [\"https://x.test\"]\n---\nI.\n"),
			"tools/tool.yaml": []byte("description: T.\neffect: read\nsteps:\n" + src),
		})
		require.False(t, l.HasErrors(), l.Error())
		lim := DefaultLimits()
		tl := p.Tools[0]
		c := &Compiler{Doc: tl.Doc, L: &l, Scope: NewScope("input", "prefs"), Limits: &lim, Registry: Builtin(), Plugin: p}
		b := c.Block(tl.Steps, "steps")
		require.False(t, l.HasErrors(), "%s: %s", src, l.Error())
		return b
	}
	const req = "  - request: {url: 'https://x.test/a'}\n"
	skips := func(b Block, i int) bool { return b[i].Step.(*requestStep).noHeaders }
	for src, want := range map[string]bool{
		req + "  - jq: '.body'\n":                                               true,
		req + "  - html: {select: li, fields: {a: a}}\n":                        true,
		req + "  - if: '.status == 200'\n    jq: '.body'\n  - return: '.url'\n": true,
		req + "  - return: '{s: .status}'\n":                                    true,
		req + "    as: r\n  - jq: '.body'\n":                                    false, // $r is read anywhere after
		req + "  - jq: '.headers'\n":                                            false,
		req:                                                                     false, // the tool's result
		req + "  - if: 'true'\n    jq: '.body'\n  - return: '.'\n":              false, // a skipped step leaves `.` to the next
		req + "  - if: '.headers.x'\n    jq: '.body'\n":                         false,
		req + "  - regex: {pattern: a}\n":                                       false, // a kind that does not say what it reads
		req + "  - html: {from: '.headers.x', select: li, fields: {a: a}}\n":    false,
	} {
		assert.Equal(t, want, skips(compile(src), 0), "%s", src)
	}
	// Nested blocks are settled too.
	b := compile("  - foreach: {in: '[1]', steps: [{request: {url: 'https://x.test/a'}}, {jq: '.body'}]}\n")
	fe, ok := b[0].Step.(*foreachStep)
	require.True(t, ok)
	assert.True(t, fe.steps[0].Step.(*requestStep).noHeaders)
}
