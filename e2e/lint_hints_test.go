package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLintWarnsSilentSlips: slips that would run without an error get a
// positioned warning (exit 0): declared access no step uses, a $variable
// written outside ${ }, and a misspelled campus service ("did you mean"
// against the built-in catalogue, for the declaration and for a step).
func TestLintWarnsSilentSlips(t *testing.T) {
	home := t.TempDir()
	doc := writeFiles(t, filepath.Join(t.TempDir(), "doc"), map[string]string{
		"PLUGIN.md": `---
id: slips
name: Slips
description: Slips lint warns about.
version: 1.0.0
access:
  campus: [cardd, portal]
  web: [https://news.example.edu.cn]
  abilities: [kv, notifications]
---
Use it.
`,
		"tools/a.yaml": `description: A.
effect: read
input: { type: object, properties: { limit: { type: integer } } }
steps:
  - request: { service: portal, path: /x, query: { limit: $input.limit, n: "${ $input.limit }" } }
    as: res
  - fail: "got $res.status for ${ $input.limit } ($$5 is fine)"
title: A
`,
	})
	r := harness(t, home, nil, "lint", doc)
	require.Equal(t, 0, r.code, r.stderr)
	want := []string{
		`PLUGIN.md:7:12: warning: campus service "cardd" is not in the built-in catalogue: did you mean "card"?`,
		`PLUGIN.md:7:12: warning: access.campus declares cardd, but no step sends a request to it`,
		`PLUGIN.md:8:9: warning: access.web declares https://news.example.edu.cn, but no step sends a request to it`,
		`warning: access.abilities declares kv, but no step uses it`,
		`tools/a.yaml:5:59: warning: query value "limit": $input.limit is the text "$input.limit" here, not its value: write ${ $input.limit } to insert it`,
		`tools/a.yaml:7:16: warning: fail: $res.status is the text "$res.status" here, not its value: write ${ $res.status } to insert it`,
	}
	for _, w := range want {
		require.Contains(t, r.stderr, w)
	}
	require.NotContains(t, r.stderr, "notifications", "a host ability no step kind uses is not warned about")
	require.NotContains(t, r.stderr, "portal, but no step", "portal is used")
	require.Equal(t, len(want), strings.Count(r.stderr, "warning:"), r.stderr)

	// A step naming an undeclared, misspelled service: the error says
	// which service was meant.
	writeFiles(t, doc, map[string]string{"tools/a.yaml": "description: A.\neffect: read\nsteps:\n  - request: { service: portl, path: /x }\n"})
	r = harness(t, home, nil, "lint", doc)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `tools/a.yaml:4:25: request to campus service "portl", which access.campus does not declare (did you mean "portal"?)`)
	writeFiles(t, doc, map[string]string{"tools/a.yaml": "description: A.\neffect: read\nsteps:\n  - request: { service: libary, path: /x }\n"})
	r = harness(t, home, nil, "lint", doc)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `request to campus service "libary", which access.campus does not declare (did you mean "library", a service of the built-in catalogue?)`)
}
