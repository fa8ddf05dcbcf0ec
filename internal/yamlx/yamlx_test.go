package yamlx

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, src string) (*Doc, diag.List) {
	t.Helper()
	var l diag.List
	d := Parse("f.yaml", []byte(src), 1, nil, DefaultLimits, &l)
	return d, l
}

func TestRefusedConstructs(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"anchor":      {"a: &x 1\n", "f.yaml:1:4: anchors (&x) are not allowed"},
		"alias":       {"a: 1\nb: *x\n", "YAML syntax error: unknown anchor 'x' referenced"},
		"merge":       {"a: {x: 1}\nb:\n  <<: {y: 2}\n", "f.yaml:3:3: merge keys (<<) are not allowed"},
		"tag":         {"a: !!str 1\n", "f.yaml:1:4: explicit tags (!!str) are not allowed"},
		"custom tag":  {"a: !evil x\n", "f.yaml:1:4: explicit tags (!evil) are not allowed"},
		"second doc":  {"a: 1\n---\nb: 2\n", "f.yaml:2:1: a second YAML document is not allowed"},
		"dup":         {"a: 1\na: 2\n", "f.yaml:2:1: duplicate key \"a\" (first at line 1)"},
		"case dup":    {"ab: 1\nAB: 2\n", "f.yaml:2:1: key \"AB\" differs only in case from \"ab\" (line 1)"},
		"non-ascii":   {"é: 1\n", "f.yaml:1:1: key \"é\" has characters outside printable ASCII"},
		"complex key": {"? [a]\n: 1\n", "f.yaml:1:3: a mapping key must be a plain string"},
		"syntax":      {"a: [1\n", "YAML syntax error"},
		"nul":         {"a: \x00\n", "NUL byte"},
		"utf8":        {"a: \xff\n", "not valid UTF-8"},
		"deep flow":   {"a: " + strings.Repeat("[", 30) + strings.Repeat("]", 30) + "\n", "nests deeper than 24 levels"},
	} {
		t.Run(name, func(t *testing.T) {
			_, l := parse(t, tc.src)
			require.True(t, l.HasErrors())
			require.Contains(t, l.Error(), tc.want)
		})
	}
}

func TestUnsafeTreeIsNotWalked(t *testing.T) {
	d, _ := parse(t, "a: &x [1]\nb: *x\n")
	require.False(t, d.Safe())
	d, _ = parse(t, "a: 1\n")
	require.True(t, d.Safe())
}

func TestDepthLimitOnBlocks(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 30; i++ {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	d, l := parse(t, b.String())
	require.False(t, d.Safe())
	require.Contains(t, l.Error(), "nesting deeper than 24 levels")
}

func TestKeyLimit(t *testing.T) {
	var l diag.List
	src := strings.Repeat("- 1\n", 200)
	Parse("f.yaml", []byte(src), 1, nil, Limits{MaxBytes: 1 << 20, MaxKeys: 100, MaxDepth: 10}, &l)
	require.Contains(t, l.Error(), "more than 100 keys and items")
}

func TestMappingUnknownKeySuggests(t *testing.T) {
	d, l := parse(t, "nmae: x\nweird: y\n")
	m, ok := d.Mapping(d.Root, "the thing", []string{"name", "value"}, &l)
	require.True(t, ok)
	require.Empty(t, m.Fields)
	require.Equal(t, "f.yaml:1:1: unknown key \"nmae\" in the thing (did you mean \"name\"?)\nf.yaml:2:1: unknown key \"weird\" in the thing", l.Error())
}

func TestSuggest(t *testing.T) {
	require.Equal(t, "description", Suggest("descripton", []string{"title", "description"}))
	require.Equal(t, "userOnly", Suggest("useronly", []string{"userOnly"}))
	require.Equal(t, "", Suggest("zzzz", []string{"title", "effect"}))
	require.Equal(t, "as", Suggest("az", []string{"as", "if"}))
}

func TestTypedGetters(t *testing.T) {
	d, l := parse(t, "s: text\nn: 12\nf: 1.5\nb: true\nnull: ~\nlist: [a, 'b']\nmap: {k: v}\nver: 1.0\n")
	m, _ := d.Mapping(d.Root, "x", nil, &l)
	get := func(k string) Pair { f, ok := m.Get(k); require.True(t, ok, k); return f }
	s, ok := d.String(get("s").Value, "s", &l)
	require.True(t, ok)
	require.Equal(t, "text", s)
	_, ok = d.String(get("ver").Value, "version", &l)
	require.False(t, ok)
	require.Contains(t, l.Error(), "version must be a string, not a number (quote it)")
	n, ok := d.Int(get("n").Value, "n", &l)
	require.True(t, ok)
	require.EqualValues(t, 12, n)
	bv, ok := d.Bool(get("b").Value, "b", &l)
	require.True(t, ok && bv)
	list, ok := d.Strings(get("list").Value, "list", &l)
	require.True(t, ok)
	require.Equal(t, []string{"a", "b"}, list)
	v, ok := d.Value(d.Root, &l)
	require.True(t, ok)
	require.Equal(t, map[string]any{"s": "text", "n": int64(12), "f": 1.5, "b": true, "null": nil,
		"list": []any{"a", "b"}, "map": map[string]any{"k": "v"}, "ver": 1.0}, v)
}

func TestPositionsThroughALineMap(t *testing.T) {
	// A fenced block whose lines sit at file lines 10.. and are indented by 2.
	var l diag.List
	lines := []LineMap{{Line: 10, Col: 2}, {Line: 11, Col: 2}}
	d := Parse("PLUGIN.md", []byte("a: 1\nbad: [\n"), 0, lines, DefaultLimits, &l)
	require.False(t, d.Safe())
	require.True(t, strings.HasPrefix(l.Error(), "PLUGIN.md:1"), l.Error())
	l = diag.List{}
	d = Parse("PLUGIN.md", []byte("a: 1\nb: &x 2\n"), 0, lines, DefaultLimits, &l)
	require.Equal(t, "PLUGIN.md:11:6: anchors (&x) are not allowed", l.Error())
}

func TestOffsetPos(t *testing.T) {
	src := "plain: abc def\nquoted: \"abc def\"\nblock: |\n  line one\n  line two\n"
	d, l := parse(t, src)
	require.False(t, l.HasErrors())
	m, _ := d.Mapping(d.Root, "x", nil, &l)
	f, _ := m.Get("plain")
	require.Equal(t, "f.yaml:1:12", d.OffsetPos(f.Value, 4).String())
	f, _ = m.Get("quoted")
	require.Equal(t, "f.yaml:2:14", d.OffsetPos(f.Value, 4).String())
	f, _ = m.Get("block")
	require.Equal(t, "f.yaml:5:8", d.OffsetPos(f.Value, len("line one\nline ")).String())
}

// TestPositionsStayInsideTheFile: an empty block scalar on the last line
// has its content "on the next line", which does not exist; positions clamp
// to the text's last line.
func TestPositionsStayInsideTheFile(t *testing.T) {
	d, l := parse(t, "a: 1\nb: |\n")
	require.False(t, l.HasErrors(), l.Error())
	m, _ := d.Mapping(d.Root, "x", nil, &l)
	f, _ := m.Get("b")
	p := d.OffsetPos(f.Value, 0)
	require.LessOrEqual(t, p.Line, 2, p.String())
	line, _ := d.ContentPos(f.Value)
	require.LessOrEqual(t, line, 2)
}

// A one-space slip is reported at the slipped line, not at the start of
// the block yaml.v3 names, with the column of the line's first character.
func TestSyntaxErrorAtTheSlip(t *testing.T) {
	var b strings.Builder
	b.WriteString("description: x\neffect: read\n")
	for i := 3; i < 12; i++ {
		b.WriteString("# filler\n")
	}
	b.WriteString("steps:\n") // line 12
	for i := 13; i < 24; i++ {
		b.WriteString("  - jq: .\n")
	}
	for name, tc := range map[string]struct{ slip, want string }{
		"dash":  {"   - return: .\n", "f.yaml:24:4: YAML syntax error: did not find expected '-' indicator"},
		"key":   {"  - request:\n      service: a\n     path: /x\n", "f.yaml:26:6: YAML syntax error: did not find expected key"},
		"value": {"  - request:\n      service: a\n       path: /x\n", "f.yaml:26:8: YAML syntax error: mapping values are not allowed in this context"},
	} {
		t.Run(name, func(t *testing.T) {
			_, l := parse(t, b.String()+tc.slip+"  - return: .\n")
			require.Len(t, l.Items, 1, l.Error())
			require.Equal(t, tc.want, l.Items[0].String())
		})
	}
	// In a fenced block the line is mapped into the file.
	var l diag.List
	Parse("PLUGIN.md", []byte("steps:\n  - jq: .\n   - jq: .\n"), 40, nil, DefaultLimits, &l)
	require.Equal(t, "PLUGIN.md:42:4: YAML syntax error: did not find expected '-' indicator", l.Error())
}
