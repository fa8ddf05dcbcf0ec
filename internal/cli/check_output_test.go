package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const outputTool = `title: Latest
description: The latest notices.
effect: read
output:
  type: object
  additionalProperties: false
  properties:
    title: {type: string}
    count: {type: integer}
    items:
      type: array
      items:
        type: object
        additionalProperties: false
        properties:
          name: {type: string}
    extra: {}
steps:
  - request: {service: news, path: /latest}
  - return: .body
`

const outputFront = `---
id: news
name: N
description: D.
version: 1.0.0
access:
  campus: [news]
dataSources:
  latest: {title: Latest, tool: latest, ttlMs: 60000}
contributes:
  widgets:
    - {key: latestCard, title: Latest, dataSource: latest, template: latest}
    - {key: latestList, title: List, dataSource: latest, template: list}
---
I.
`

// lint follows a widget's plain paths through the output schema of its
// data source's tool, and checks the test cases' expected outputs against
// it: each mismatch an error at its FILE:LINE:COL (inside the widget's
// JSON); paths the schema leaves open, and matching ones, pass.
func TestLintChecksWidgetsAndTestsAgainstTheOutputSchema(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":         outputFront,
		"tools/latest.yaml": outputTool,
		"widgets/latest.json": `{"type": "card", "title": "${ .title }", "value": "${ .cuont // 0 } 条",
 "subtitle": "${ .title.x }", "badge": "${ .extra.any.thing } ${ .count | tostring }"}
`,
		"widgets/list.json": `{"type": "list", "title": "共 ${ .count } 条", "items": "${ .items }",
 "item": {"title": "${ .nmae }", "value": "${ .name }"}}
`,
		"tests/latest.yaml": `cases:
  - name: latest
    tool: latest
    exchanges:
      - request: {service: news, path: /latest}
        response: {status: 200, json: {title: x, count: "3", items: []}}
    expect:
      output: {title: x, count: "3", items: []}
  - name: good
    tool: latest
    exchanges:
      - request: {service: news, path: /latest}
        response: {status: 200, json: {title: x, count: 3, items: [{name: a}]}}
    expect:
      output: {title: x, count: 3, items: [{name: a}]}
`,
	})
	code, out, errs := runCLI(t, nil, "lint", dir)
	require.Equal(t, 1, code, out+errs)
	assert.Equal(t, strings.Join([]string{
		`tests/latest.yaml:2:5: test case "latest": the expected output does not match the output schema of tool latest (tools/latest.yaml:1:1): at /count: got string, want integer`,
		`widgets/latest.json:1:51: widget latest (card) value reads .cuont, but the output schema of tool latest (tools/latest.yaml:1:1) gives the result no "cuont" (it has: "count", "extra", "items", "title")`,
		`widgets/latest.json:2:14: widget latest (card) subtitle reads .title.x, but the output schema of tool latest (tools/latest.yaml:1:1) makes .title a string, not an object`,
		`widgets/list.json:2:20: widget list (list) item title reads .nmae of each item of .items, but the output schema of tool latest (tools/latest.yaml:1:1) gives each item of .items no "nmae" (it has: "name")`,
		``}, "\n"), errs)

	// A list whose items the schema makes a string; a widget in a fenced
	// block of PLUGIN.md, whose positions are PLUGIN.md's.
	dir = writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md": strings.Replace(outputFront, "\nI.\n", "\nI.\n\n```json widget list\n{\"type\": \"list\", \"items\": \"${ .title }\",\n \"item\": {\"title\": \"${ .name }\"}}\n```\n", 1) +
			"",
		"tools/latest.yaml":   outputTool,
		"widgets/latest.json": `{"type": "card", "title": "${ .title }"}`,
	})
	code, out, errs = runCLI(t, nil, "lint", dir)
	require.Equal(t, 1, code, out+errs)
	assert.Equal(t, `PLUGIN.md:18:27: widget list (list) items reads .title, but the output schema of tool latest (tools/latest.yaml:1:1) makes it a string, not a list (an array, or an object whose values are listed)`+"\n", errs)
}
