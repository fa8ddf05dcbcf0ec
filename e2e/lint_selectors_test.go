package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLintWarnsUnmatchedSelectors: lint runs each html and xml step's
// selectors over the responses recorded in the tool's test cases and warns,
// at the selector, for a select that matched no element and for a field
// (a misspelled selector, a misspelled attribute) that was null in every
// element; fields that matched, and a GBK page, give no warning.
func TestLintWarnsUnmatchedSelectors(t *testing.T) {
	home := t.TempDir()
	doc := writeFiles(t, filepath.Join(t.TempDir(), "doc"), map[string]string{
		"PLUGIN.md": "---\nid: sel-doc\nname: Sel\ndescription: Selectors.\nversion: 1.0.0\naccess:\n  campus: [portal]\n---\nUse it.\n",
		"tools/list.yaml": `description: Notices.
effect: read
steps:
  - request: { service: portal, path: /list }
    as: res
  - html:
      from: $res.body
      select: li.notice
      fields:
        title: a
        date: span.dat
        link: { select: a, attr: hreff }
        href: { select: a, attr: href }
title: Notices
`,
		"tools/none.yaml": `description: Nothing matches.
effect: read
steps:
  - request: { service: portal, path: /none }
  - html:
      select: div.item
title: Nothing
`,
		"tools/feed.yaml": `description: A feed.
effect: read
steps:
  - request: { service: portal, path: /feed }
  - xml:
      select: channel/item
      fields: { title: title, author: creatorr, link: link }
title: Feed
`,
		"tests/cases.yaml": `cases:
  - name: the list
    tool: list
    exchanges:
      - request: { path: /list }
        response:
          charset: gbk
          body: '<html><body><ul><li class="notice"><a href="/a">通知甲</a><span class="date">2026-04-01</span></li><li class="notice"><a href="/b">通知乙</a></li></ul></body></html>'
    expect:
      jq: ['length == 2']
  - name: nothing
    tool: none
    exchanges:
      - request: { path: /none }
        response:
          body: '<html><body><p>empty</p></body></html>'
    expect:
      output: []
  - name: the feed
    tool: feed
    exchanges:
      - request: { path: /feed }
        response:
          headers: { Content-Type: application/rss+xml }
          body: '<rss><channel><item><title>A</title><link>https://a</link></item></channel></rss>'
    expect:
      jq: ['length == 1']
`,
	})
	r := harness(t, home, nil, "lint", doc)
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{
		`tools/list.yaml:11:9: warning: html field date ("span.dat") is null in all 2 elements that "li.notice" selected in tool list's recorded responses`,
		`tools/list.yaml:12:9: warning: html field link ("a" (attribute hreff)) is null in all 2 elements`,
		`tools/none.yaml:6:15: warning: html select css selector "div.item" matched no element in the 1 response recorded for tool none's test cases`,
		`tools/feed.yaml:7:31: warning: xml field author ("creatorr") is null in all 1 element that "channel/item" selected`,
	} {
		require.Contains(t, r.stderr, want)
	}
	require.Equal(t, 4, strings.Count(r.stderr, "warning:"), r.stderr)
	// The cases themselves pass: the warnings are about what they never show.
	r = harness(t, home, nil, "test", doc)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
}
