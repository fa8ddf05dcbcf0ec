package plugintest_test

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const webPlugin = `---
id: news
name: 新闻
description: A paginated HTML scraper, for the runner's web replay tests.
version: 1.0.0
access:
  web:
    - https://news.example.edu.cn
    - http://old.example.edu.cn:8080
---
Tools for tests.
`

// listTool reads two pages of an HTML list and follows a redirect.
const listTool = `description: Headlines of the first two pages.
effect: read
steps:
  - request: {url: "https://news.example.edu.cn/list", query: {page: "1"}}
    as: p1
  - request: {url: "https://news.example.edu.cn/list", query: {page: "2"}}
    as: p2
  - jq: '$p1.body + $p2.body'
  - html: {from: ., select: li}
    as: titles
  - request: {method: POST, url: "http://old.example.edu.cn:8080/search", form: {q: "图书馆"}}
  - return: '{titles: $titles, found: .body.n, final: .url}'
`

func webDoc(tests string) manifest.Files {
	return manifest.Files{
		"PLUGIN.md":       []byte(webPlugin),
		"tools/list.yaml": []byte(listTool),
		"tests/web.yaml":  []byte(tests),
	}
}

// Web exchanges are keyed by origin (written as declared or in any
// spelling that normalises to it) and answer as campus ones do: queries,
// forms, redirects the proxy follows, the https origin over TLS.
func TestWebReplay(t *testing.T) {
	rep := run(t, webDoc(`cases:
  - name: two pages and a search
    tool: list
    exchanges:
      - request: {origin: https://news.example.edu.cn, path: /list, query: {page: 1}}
        response: {body: "<ul><li>一</li><li>二</li></ul>"}
      - request: {origin: "HTTPS://News.Example.edu.cn:443", path: /list, query: {page: 2}}
        response: {body: "<ul><li>三</li></ul>"}
      - request: {origin: http://old.example.edu.cn:8080, method: POST, path: /search, form: {q: 图书馆}}
        response: {status: 302, headers: {Location: /results}}
      - request: {origin: http://old.example.edu.cn:8080, path: /results}
        response: {json: {n: 3}}
    expect:
      output: {titles: [一, 二, 三], found: 3, final: "http://old.example.edu.cn:8080/results"}
`))
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 1)
	assert.Empty(t, rep.Cases[0].Failures)
	assert.True(t, rep.OK())
}

// Every request a run makes must be answered: one the case does not
// record fails it, naming the method and the whole URL, and an exchange
// of the wrong origin does not answer it.
func TestWebReplayUnansweredRequest(t *testing.T) {
	rep := run(t, webDoc(`cases:
  - name: page 2 is recorded for the wrong origin
    tool: list
    exchanges:
      - request: {origin: https://news.example.edu.cn, path: /list, query: {page: 1}}
        response: {body: "<ul><li>一</li></ul>"}
      - request: {origin: http://old.example.edu.cn:8080, path: /list, query: {page: 2}}
        response: {body: "<ul><li>三</li></ul>"}
    expect:
      error: answered
`))
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 1)
	all := strings.Join(rep.Cases[0].Failures, "\n")
	assert.Contains(t, all, "no recorded exchange answers GET https://news.example.edu.cn/list?page=2 (web origin https://news.example.edu.cn); recorded for https://news.example.edu.cn: GET /list?page=1 at tests/web.yaml:5:9")
	assert.Contains(t, all, "no recorded exchange answers POST http://old.example.edu.cn:8080/search (web origin http://old.example.edu.cn:8080)")
}

// A document with one web origin and no campus service may leave origin
// out; with several, a request must name one of those it declares.
func TestWebExchangeOrigins(t *testing.T) {
	one := manifest.Files{
		"PLUGIN.md": []byte(strings.Replace(webPlugin, "    - http://old.example.edu.cn:8080\n", "", 1)),
		"tools/p.yaml": []byte("description: One page.\neffect: read\nsteps:\n" +
			"  - request: {url: \"https://news.example.edu.cn/p\"}\n  - return: .body\n"),
		"tests/p.yaml": []byte("cases:\n  - tool: p\n    exchanges:\n      - request: {path: /p}\n        response: {body: hello}\n    expect: {output: hello}\n"),
	}
	rep := run(t, one)
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 1)
	assert.Empty(t, rep.Cases[0].Failures)

	rep = run(t, webDoc(`cases:
  - tool: list
    exchanges:
      - request: {path: /list}
        response: {body: x}
      - request: {origin: https://news.example.edu.com, path: /list}
        response: {body: x}
      - request: {origin: "https://news.example.edu.cn/list", path: /list}
        response: {body: x}
      - request: {origin: https://news.example.edu.cn, service: card, path: /list}
        response: {body: x}
      - request: {origin: https://news.example.edu.cn, path: /list, session: true}
        response: {body: x}
    expect: {error: x}
`))
	msgs := rep.Problems.Error()
	for _, want := range []string{
		"tests/web.yaml:4:18: request needs service or origin: the document declares 0 campus services and 2 web origins",
		`tests/web.yaml:6:27: origin "https://news.example.edu.com" is not in the document's access.web (did you mean "https://news.example.edu.cn"?)`,
		`tests/web.yaml:8:27: origin "https://news.example.edu.cn/list": an origin is scheme://host[:port], with no path, query or fragment`,
		"tests/web.yaml:10:18: a request has service (a campus service) or origin (a web origin), not both",
		"tests/web.yaml:12:78: a web request carries no session",
	} {
		assert.Contains(t, msgs, want)
	}
}
