package e2e

// The format skeleton written in every way YAML allows, and lint's
// positions, driven through the built binary.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// crlf turns every line break into CR LF.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

const bom = "\ufeff"

// The skeleton's parts in unusual but valid YAML: flow style, quoted keys,
// comments, block scalars, tabs as separators, CRLF line breaks and a
// byte-order mark. Each document lints clean and runs as its plain twin.
func TestConformanceUnusualYAML(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	front := `---
# the manifest, in flow style with quoted keys
{ "id": "odd-yaml", 'name': "Odd YAML",	description: "a description
    on two lines", version: '1.0.0',   # a comment
  requires: [ campus-session ],
  access: { campus: [ { service: portal, paths: [ "/api/" ] } ], web: [ 'https://news.example.edu.cn' ], abilities: [ kv ] } }
---
Instructions.
`
	tool := `# a tool
"title": 'Odd'
description: >-
  Folded
  description.
effect:	read	# a tab before the value and before the comment
'untrusted': false
"userOnly": false
input: {type: object, properties: {"n": {type: integer}}, required: ["n"]}
steps:
- jq: |
    {n: $input.n,
     first: (. == null)}
  as: a
- {if: '.n > 1', jq: '. + {big: true}'}
- if: >
    .n
    == 3
  fail: "three is
    refused: ${ .n }"
- return: '{a: $a, dot: ., "it''s": 1}'
`
	for name, files := range map[string]map[string]string{
		"plain": {"PLUGIN.md": front, "tools/t.yaml": tool},
		"crlf":  {"PLUGIN.md": crlf(front), "tools/t.yaml": crlf(tool)},
		"bom":   {"PLUGIN.md": bom + front, "tools/t.yaml": bom + tool},
		"both":  {"PLUGIN.md": bom + crlf(front), "tools/t.yaml": bom + crlf(tool)},
	} {
		t.Run(name, func(t *testing.T) {
			doc := writeFiles(t, t.TempDir(), files)
			r := harness(t, home, nil, "lint", doc)
			require.Equal(t, 0, r.code, r.stderr)
			r = harness(t, home, nil, "lint", filepath.Join(doc, "PLUGIN.md"))
			require.Equal(t, 0, r.code, r.stderr)
			r = harness(t, home, nil, "review", doc, "--json")
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stdout, `"odd-yaml"`)
			r = harness(t, home, nil, "run", doc, "t", "--input", `{"n": 1}`)
			require.Equal(t, 0, r.code, r.stderr)
			require.JSONEq(t, `{"a": {"n": 1, "first": true}, "dot": {"n": 1, "first": true}, "it's": 1}`, r.stdout)
			r = harness(t, home, nil, "run", doc, "t", "--input", `{"n": 2}`)
			require.Equal(t, 0, r.code, r.stderr)
			require.JSONEq(t, `{"a": {"n": 2, "first": true}, "dot": {"n": 2, "first": true, "big": true}, "it's": 1}`, r.stdout)
			r = harness(t, home, nil, "run", doc, "t", "--input", `{"n": 3}`)
			requireFailed(t, r, 1, "fail")
			require.Contains(t, r.stderr, "three is refused: 3")
		})
	}
}

// Lint's FILE:LINE:COL points at the character that is wrong, in every
// scalar style and with CRLF line breaks, in tools/*.yaml and in a tool
// block of PLUGIN.md.
func TestConformanceLintPositions(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	tool := "description: d\neffect: read\nsteps:\n" +
		"  - jq: .a |\n      $one\n" + // 5:7
		"  - return: '\"it''s\" + $two'\n" + // 6:24
		"  - jq: \".a |\n     $three\"\n" + // 8:6
		"  - fail: 'x\n\n     ${ $four }'\n" + // 11:9
		"  - jq: |\n      .a\n        | $five\n" + // 14:11
		"  - {jq: '\"二教\" | $six'}\n" + // 15:18
		"title: T\n"
	want := [][2]int{{5, 7}, {6, 24}, {8, 6}, {11, 9}, {14, 11}, {15, 18}}
	vars := []string{"$one", "$two", "$three", "$four", "$five", "$six"}
	check := func(t *testing.T, stderr, file string, lineShift int) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		require.Len(t, lines, len(want), stderr)
		for i, w := range want {
			at := fmt.Sprintf("%s:%d:%d: ", file, w[0]+lineShift, w[1])
			require.True(t, strings.HasPrefix(lines[i], at), "%s: want %s in %q", vars[i], at, lines[i])
			require.Contains(t, lines[i], vars[i])
		}
	}
	for name, text := range map[string]string{"lf": tool, "crlf": crlf(tool)} {
		t.Run(name, func(t *testing.T) {
			doc := writeFiles(t, t.TempDir(), map[string]string{
				"PLUGIN.md":    "---\nid: positions\nname: P\ndescription: d\nversion: 1.0.0\n---\nx\n",
				"tools/t.yaml": text,
			})
			r := harness(t, home, nil, "lint", doc)
			require.Equal(t, 1, r.code, r.stderr)
			check(t, r.stderr, "tools/t.yaml", 0)

			// The same tool as a block of a single PLUGIN.md: lines shift
			// by the block's start, columns do not.
			single := writeFiles(t, t.TempDir(), map[string]string{
				"PLUGIN.md": "---\nid: positions\nname: P\ndescription: d\nversion: 1.0.0\n---\nx\n\n```yaml tool t\n" + text + "```\n",
			})
			r = harness(t, home, nil, "lint", filepath.Join(single, "PLUGIN.md"))
			require.Equal(t, 1, r.code, r.stderr)
			check(t, r.stderr, "PLUGIN.md", 9)
		})
	}
}

// Every problem lint finds is one FILE:LINE:COL: message line, FILE
// relative to PATH, whether it is in a file's text or in the files
// themselves (a stray file, a symbolic link, a file over the limit).
func TestConformanceLintFileProblemsArePositioned(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	plugin := "---\nid: files\nname: F\ndescription: d\nversion: 1.0.0\n---\nx\n"
	tool := "description: t\neffect: read\nsteps:\n  - return: '1'\n"
	for name, tc := range map[string]struct {
		setup func(dir string)
		want  string
	}{
		"stray file in tools": {func(dir string) { writeFiles(t, dir, map[string]string{"tools/notes.txt": "x"}) }, "tools/notes.txt:1:1: "},
		"test in a subfolder": {func(dir string) {
			writeFiles(t, dir, map[string]string{"tests/sub/a.yaml": "cases:\n  - tool: t\n    expect: {output: 2}\n"})
		}, "tests/sub/a.yaml:1:1: "},
		"symbolic link": {func(dir string) {
			require.NoError(t, os.Symlink(filepath.Join(dir, "tools", "t.yaml"), filepath.Join(dir, "tools", "l.yaml")))
		}, "tools/l.yaml:1:1: "},
		"file over the limit": {func(dir string) {
			writeFiles(t, dir, map[string]string{"big.txt": strings.Repeat("a", 1<<20+1)})
		}, "big.txt:1:1: "},
	} {
		t.Run(name, func(t *testing.T) {
			doc := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": plugin, "tools/t.yaml": tool})
			tc.setup(doc)
			r := harness(t, home, nil, "lint", doc)
			require.Equal(t, 1, r.code, r.stderr)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			for _, ln := range lines {
				require.Regexp(t, diagLine, ln)
			}
			require.True(t, strings.HasPrefix(r.stderr, tc.want), r.stderr)
		})
	}
	// A single PLUGIN.md over the limit: FILE is the name given.
	dir := writeFiles(t, t.TempDir(), map[string]string{"doc.md": plugin + strings.Repeat("a", 1<<20)})
	r := harness(t, home, nil, "lint", filepath.Join(dir, "doc.md"))
	require.Equal(t, 1, r.code, r.stderr)
	require.Regexp(t, diagLine, strings.TrimSpace(r.stderr))
	require.True(t, strings.HasPrefix(r.stderr, "doc.md:1:1: "), r.stderr)
	// A PATH that does not exist is not a document: a plain message.
	r = harness(t, home, nil, "lint", filepath.Join(dir, "nothing"))
	require.Equal(t, 1, r.code, r.stderr)
	require.NotEmpty(t, r.stderr)
}

// The skeleton's smaller promises: method defaults to GET, jq gives its
// first result, an html field is the first match inside its element (its
// attribute too), an id may have 40 characters and no more.
func TestConformanceStepDetails(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := newSite(t)
	services := servicesFile(t, "portal", s.srv.URL)
	id := "a" + strings.Repeat("b", 39)
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md": auditDoc(id, "1.0.0", "requires: [campus-session]\naccess:\n  campus: [portal]\n"),
		"tools/d.yaml": `description: details
effect: read
steps:
  - request: {service: portal, path: /json/rooms}
    as: res
  - jq: '.body.rooms[] | .name'
    as: first
  - html: {from: '"<ul><li><a href=/1>one</a><a href=/2>two</a></li><li><span>x</span></li></ul>"', select: li, fields: {a: a, href: {select: a, attr: href}}}
    as: rows
  - return: '{first: $first, rows: $rows, status: $res.status}'
`,
	})
	r := harness(t, home, nil, "run", doc, "d", "--services", services)
	require.Equal(t, 0, r.code, r.stderr)
	var out struct {
		First  string
		Rows   []map[string]any
		Status int
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.Equal(t, "101", out.First, "the first of the program's results")
	require.Equal(t, 200, out.Status)
	require.Len(t, out.Rows, 2)
	require.Equal(t, "one", out.Rows[0]["a"], "the first match inside the element")
	require.Equal(t, "/1", out.Rows[0]["href"])
	got := s.requests()
	require.Len(t, got, 1)
	require.Equal(t, "GET", got[0].Method, "method defaults to GET")

	long := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md":    auditDoc(id+"c", "1.0.0", ""),
		"tools/d.yaml": "description: d\neffect: read\nsteps:\n  - return: '1'\n",
	})
	r = harness(t, home, nil, "lint", long)
	require.Equal(t, 1, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "PLUGIN.md:2:5: "), r.stderr)
}

// harness test never reports a pass that did not happen: a case file the
// runner would not read makes the document invalid, an empty expectation
// is refused, and an integer off by one in its last digit fails.
func TestConformanceTestCommandNoFalsePass(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	base := map[string]string{
		"PLUGIN.md":      auditDoc("no-false-pass", "1.0.0", ""),
		"tools/one.yaml": "description: one\neffect: read\nsteps:\n  - return: '{id: 9007199254740993}'\n",
	}
	for name, extra := range map[string]map[string]string{
		"case file in a subfolder": {"tests/ok.yaml": "cases:\n  - tool: one\n    expect: {jq: ['.id > 0']}\n", "tests/more/wrong.yaml": "cases:\n  - tool: one\n    expect: {output: 2}\n"},
		"upper-case extension":     {"tests/ok.yaml": "cases:\n  - tool: one\n    expect: {jq: ['.id > 0']}\n", "tests/wrong.YML": "cases:\n  - tool: one\n    expect: {output: 2}\n"},
		"empty jq list":            {"tests/t.yaml": "cases:\n  - tool: one\n    expect: {jq: []}\n"},
		"last digit off":           {"tests/t.yaml": "cases:\n  - tool: one\n    expect: {output: {id: 9007199254740992}}\n"},
	} {
		t.Run(name, func(t *testing.T) {
			doc := writeFiles(t, t.TempDir(), base)
			writeFiles(t, doc, extra)
			r := harness(t, home, nil, "test", doc)
			require.Equal(t, 1, r.code, "%s%s", r.stdout, r.stderr)
			require.NotContains(t, r.stdout, "ok ")
		})
	}
	doc := writeFiles(t, t.TempDir(), base)
	writeFiles(t, doc, map[string]string{"tests/t.yaml": "cases:\n  - tool: one\n    expect: {output: {id: 9007199254740993}}\n"})
	r := harness(t, home, nil, "test", doc)
	require.Equal(t, 0, r.code, "%s%s", r.stdout, r.stderr)
}
