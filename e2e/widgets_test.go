package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLintChecksWidgets: widget templates are read in the generative-UI
// format; a template whose jq does not compile, an unknown element type or
// key, and a value of the wrong type are positioned lint errors, in a
// widgets/NAME.json file and in a "json widget NAME" block of PLUGIN.md.
func TestLintChecksWidgets(t *testing.T) {
	home := t.TempDir()
	front := "---\nid: wdoc\nname: W\ndescription: Widgets.\nversion: 1.0.0\n---\nUse it.\n"
	tool := "description: Listings.\neffect: read\nsteps:\n  - return: '{listings: [{name: \"a\"}]}'\n"

	good := writeFiles(t, filepath.Join(t.TempDir(), "good"), map[string]string{
		"PLUGIN.md":           front,
		"tools/listings.yaml": tool + "title: Listings\n",
		"widgets/list.json":   `{"type": "list", "title": "房源", "subtitle": "共 ${ .listings | length } 套", "items": "${ .listings }", "item": {"title": "${ .name }", "value": "${ .price // \"?\" } 元"}, "empty": "暂无", "max": 5}`,
		"widgets/card.json":   `{"type": "card", "title": "${ .listings[0].name }", "value": "${ .listings | length }"}`,
	})
	r := harness(t, home, nil, "lint", good)
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)

	bad := writeFiles(t, filepath.Join(t.TempDir(), "bad"), map[string]string{
		"PLUGIN.md":           front,
		"tools/listings.yaml": tool,
		"widgets/a.json":      `{"type": "list", "title": "x", "items": "${ .listings[ }", "item": {"title": "${ .name }"}}`,
		"widgets/b.json":      "{\n  \"type\": \"lst\"\n}",
		"widgets/c.json":      "{\"type\": \"card\",\n \"titel\": \"${ .a }\", \"value\": 3}",
		"widgets/d.json":      `{"type": "list", "items": "n: ${ .listings }", "item": "${ .name }", "max": -1}`,
	})
	r = harness(t, home, nil, "lint", bad)
	require.Equal(t, 1, r.code, r.stderr)
	for _, want := range []string{
		"widgets/a.json:1:56: jq syntax error", // inside "${ .listings[ }"
		`widgets/b.json:2:11: warning: widget b: unknown element type "lst" (known: card or list); did you mean "list"?`,
		`widgets/c.json:2:2: widget c (card): unknown key "titel" (did you mean "title"?)`,
		`widgets/c.json:2:31: widget c (card) value must be a string`,
		`widgets/c.json:1:1: widget c (card) needs "title"`,
		`widgets/d.json:1:27: widget d (list) items must be exactly one ${ JQ } giving the list of items`,
		`widgets/d.json:1:56: widget d (list) item must be a JSON object of texts`,
		`widgets/d.json:1:77: widget d (list) max must be a whole number above 0`,
	} {
		require.Contains(t, r.stderr, want)
	}

	// The same slip in a fenced block of a single PLUGIN.md: the position
	// is in PLUGIN.md.
	single := filepath.Join(t.TempDir(), "PLUGIN.md")
	writeFiles(t, filepath.Dir(single), map[string]string{"PLUGIN.md": strings.TrimSuffix(front, "Use it.\n") + "Use it.\n\n```yaml tool listings\n" + tool + "```\n\n```json widget list\n{\"type\": \"list\", \"title\": \"x\",\n \"items\": \"${ .listings[ }\", \"item\": {\"title\": \"${ .name }\"}}\n```\n"})
	r = harness(t, home, nil, "lint", single)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "PLUGIN.md:18:26: jq syntax error")

	// An element type the format does not know (a document written before
	// it was documented) is a warning, so the document still installs; its
	// templates are still compiled.
	older := writeFiles(t, filepath.Join(t.TempDir(), "older"), map[string]string{
		"PLUGIN.md": front, "tools/listings.yaml": tool, "widgets/t.json": `{"type":"text","text":"hi ${ .listings | length }"}`})
	r = harness(t, home, nil, "lint", older)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, `widgets/t.json:1:9: warning: widget t: unknown element type "text"`)
	broken := writeFiles(t, filepath.Join(t.TempDir(), "broken"), map[string]string{
		"PLUGIN.md": front, "tools/listings.yaml": tool, "widgets/t.json": `{"type":"text","text":"hi ${ .listings[ }"}`})
	r = harness(t, home, nil, "lint", broken)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "jq syntax error")
}
