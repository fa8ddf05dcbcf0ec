package plugintest_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const demoPlugin = `---
id: demo
name: 演示
description: A document for the runner's own tests.
version: 1.0.0
access:
  campus:
    - card
  web:
    - http://news.example.edu.cn
---
Tools for tests.
`

const balTool = `title: 余额
description: The balance in yuan.
effect: read
input:
  type: object
  properties:
    q: {type: string}
steps:
  - if: $input.q != null
    request: {service: card, path: /q, query: {x: "${ $input.q }"}}
  - if: $input.q == null
    request: {service: card, path: /q}
  - if: .status != 200
    fail: "answered ${ .status }"
  - return: '{yuan: (.body.fen / 100)}'
`

const echoTool = `description: Echoes its input.
effect: write
userOnly: true
input:
  type: object
  properties:
    x: {type: string}
steps:
  - return: $input
`

const formTool = `description: Posts a form.
effect: write
steps:
  - request: {service: card, method: POST, path: /f, form: {a: "1", b: "2"}}
  - return: .body
`

const webTool = `description: Reads a web page.
effect: read
steps:
  - request: {url: "http://news.example.edu.cn/x"}
  - return: .status
`

func demo(tests string) manifest.Files {
	return manifest.Files{
		"PLUGIN.md":        []byte(demoPlugin),
		"tools/bal.yaml":   []byte(balTool),
		"tools/echo.yaml":  []byte(echoTool),
		"tools/form.yaml":  []byte(formTool),
		"tools/web.yaml":   []byte(webTool),
		"tests/cases.yaml": []byte(tests),
	}
}

func run(t *testing.T, files manifest.Files) *plugintest.Report {
	t.Helper()
	return plugintest.RunFiles(context.Background(), files, plugintest.Options{})
}

const passing = `secrets:
  card:
    headers: {synjones-auth: "bearer demo-jwt-0001"}
cases:
  - name: exact output, the session and the fixed query checked
    tool: bal
    exchanges:
      - request: {path: /q}
        response: {json: {fen: 250}}
    expect:
      output: {yuan: 2.5}
  - name: jq assertions, a repeated exchange is not needed
    tool: bal
    input: {q: "a b"}
    exchanges:
      - request: {path: /q, query: {x: "a b", synAccessSource: h5}}
        response: {json: {fen: 100}}
    expect:
      jq:
        - .yuan == 1
        - {expr: .yuan, equals: 1}
  - name: HTTP 401 means login_required
    tool: bal
    exchanges:
      - request: {path: /q}
        response: {status: 401, json: {code: 401, message: "token失效"}}
    expect:
      status: login_required
  - name: a login redirect means login_required
    tool: bal
    exchanges:
      - request: {path: /q}
        response: {status: 302, headers: {Location: "https://iaaa.pku.edu.cn/iaaa/oauth.jsp?appID=x"}}
    expect:
      status: login_required
  - name: a failure message
    tool: bal
    exchanges:
      - request: {path: /q}
        response: {status: 500, body: oops}
    expect:
      error: answered 500
  - name: the agent may not call a userOnly tool
    tool: echo
    actor: agent
    expect:
      refused: user_only
  - name: a form body
    tool: form
    exchanges:
      - request: {method: POST, path: /f, form: {a: 1, b: 2}}
        response: {json: {ok: true}}
    expect:
      output: {ok: true}
`

func TestPassingCases(t *testing.T) {
	rep := run(t, demo(passing))
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	for _, c := range rep.Cases {
		assert.Empty(t, c.Failures, "%s: %s", c.Pos, c.Name)
	}
	assert.True(t, rep.OK())
	require.Len(t, rep.Cases, 7)
	assert.Equal(t, "tests/cases.yaml:5:5", rep.Cases[0].Pos.String())
	var b bytes.Buffer
	rep.Write(&b, true)
	assert.Contains(t, b.String(), "--- PASS: tests/cases.yaml:5:5: exact output, the session and the fixed query checked")
	assert.Contains(t, b.String(), "ok   demo: 7 cases passed")
}

// Each failing case fails for the reason it is built to fail for, with a
// message that says where and what.
func TestFailures(t *testing.T) {
	tests := `secrets:
  card:
    headers: {synjones-auth: "bearer demo-jwt-0002"}
cases:
  - name: output differs
    tool: bal
    exchanges:
      - request: {path: /q}
        response: {json: {fen: 250}}
    expect:
      output: {yuan: 2}
  - name: query differs
    tool: bal
    input: {q: "1"}
    exchanges:
      - request: {path: /q, query: {x: "2"}}
        response: {json: {fen: 250}}
    expect:
      output: {yuan: 2.5}
  - name: unused exchange
    tool: bal
    exchanges:
      - request: {path: /q}
        response: {json: {fen: 250}}
      - request: {path: /other}
        response: {json: {}}
    expect:
      output: {yuan: 2.5}
  - name: no session
    tool: bal
    secrets:
      card:
        headers: {x-unrelated: "not-attached-0003"}
    exchanges:
      - request: {path: /q}
        response: {json: {fen: 250}}
    expect:
      output: {yuan: 2.5}
  - name: a session value leaks into the output
    tool: echo
    input: {x: "bearer demo-jwt-0002"}
    expect:
      jq: ['.x | endswith("0002")']
  - name: allowed but a refusal was expected
    tool: echo
    expect:
      refused: user_only
  - name: a result but a failure was expected
    tool: bal
    exchanges:
      - request: {path: /q}
        response: {json: {fen: 1}}
    expect:
      error: something
  - name: no status
    tool: bal
    exchanges:
      - request: {path: /q}
        response: {json: {fen: 1}}
    expect:
      status: login_required
  - name: false assertion
    tool: bal
    exchanges:
      - request: {path: /q}
        response: {json: {fen: 1}}
    expect:
      jq: [.yuan > 1]
  - name: form differs
    tool: form
    exchanges:
      - request: {method: POST, path: /f, form: {a: 1, b: 3}}
        response: {json: {ok: true}}
    expect:
      output: {ok: true}
  - name: an unanswered web request
    tool: web
    expect:
      output: 200
`
	rep := run(t, demo(tests))
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 11)
	want := map[string][]string{
		"output differs":  {"the result differs:", `-   "yuan": 2`, `+   "yuan": 2.5`},
		"query differs":   {"no recorded exchange answers GET /q?x=1 (service card); recorded for card: GET /q?x=2 at tests/cases.yaml:16:9"},
		"unused exchange": {"the exchange at tests/cases.yaml:25:9 (GET /other) was never requested"},
		"no session":      {"attaches none of the cookies and headers the case gives"},
		// The engine redacts the result itself, so the value never reaches it.
		"a session value leaks into the output": {`endswith("0002")`, `"x": "[redacted]"`},
		"allowed but a refusal was expected":    {"expected a refusal (user_only), got a result"},
		"a result but a failure was expected":   {`expected a failure containing "something", got a result`},
		"no status":                             {"expected status login_required, got status none"},
		"false assertion":                       {"jq assertion at tests/cases.yaml:68:12 is not true: .yuan > 1 (it gave false)"},
		"form differs":                          {"the form of the request answered by the exchange at tests/cases.yaml:72:9 differs", "- b=3", "+ b=2"},
		"an unanswered web request":             {"no recorded exchange answers GET http://news.example.edu.cn/x (web origin http://news.example.edu.cn); the case records no exchange for http://news.example.edu.cn"},
	}
	for _, c := range rep.Cases {
		require.NotEmpty(t, c.Failures, c.Name)
		all := strings.Join(c.Failures, "\n")
		for _, w := range want[c.Name] {
			assert.Contains(t, all, w, c.Name)
		}
		assert.NotContains(t, all, "demo-jwt-0002", "no failure message quotes a session value")
	}
	assert.False(t, rep.OK())
	var b bytes.Buffer
	rep.Write(&b, false)
	assert.Contains(t, b.String(), "--- FAIL: tests/cases.yaml:5:5: output differs (tool bal,")
	assert.Contains(t, b.String(), "FAIL demo: 11 of 11 cases failed")
}

func TestParseErrors(t *testing.T) {
	tests := `cases:
  - name: a
    tool: bal
    exchanes: []
    expect: {output: 1}
  - name: a
    tool: bal
    expect: {output: 1}
  - name: b
    tool: balance
    expect: {output: 1}
  - name: c
    tool: bal
  - name: d
    tool: bal
    expect: {refused: usr_only, output: 1}
  - name: e
    tool: bal
    exchanges:
      - request: {path: "/q?x=1"}
        response: {json: 1}
      - request: {path: /q}
        response: {json: 1, body: x}
    expect:
      jq: ['.a ==']
`
	rep := run(t, demo(tests))
	require.True(t, rep.Problems.HasErrors())
	var got []string
	for _, d := range rep.Problems.Items {
		got = append(got, d.String())
	}
	assert.Equal(t, []string{
		`tests/cases.yaml:4:5: unknown key "exchanes" in case "a" (did you mean "exchanges"?)`,
		`tests/cases.yaml:6:5: case "a" is defined twice in cases (also at tests/cases.yaml:2:5)`,
		`tests/cases.yaml:10:11: case "b" calls tool "balance", which the document does not define`,
		`tests/cases.yaml:12:5: case "c" needs "expect": output, jq, error, status, refused or kv`,
		`tests/cases.yaml:16:13: expect holds a result (output, jq, status), an error or a refusal: only one of them`,
		`tests/cases.yaml:16:23: refused "usr_only" is not a refusal reason (did you mean "user_only"?)`,
		`tests/cases.yaml:20:25: path "/q?x=1" must start with / and hold no ? or # (the query goes in query)`,
		`tests/cases.yaml:23:19: a response has json or body, not both`,
		`tests/cases.yaml:25:12: jq syntax error: unexpected EOF`,
	}, got)
	var b bytes.Buffer
	rep.Write(&b, false)
	assert.Contains(t, b.String(), "FAIL demo: the document or its tests have errors; no case ran")
}

// A single PLUGIN.md carries its tests in a "yaml test NAME" block; positions
// are in PLUGIN.md.
func TestFencedTestBlock(t *testing.T) {
	doc := demoPlugin + "\n```yaml tool bal\n" + balTool + "```\n\n```yaml test smoke\n" + `cases:
  - name: balance
    tool: bal
    exchanges:
      - request: {path: /q}
        response: {json: {fen: 5}}
    expect:
      output: {yuan: 0.05}
` + "```\n"
	rep := run(t, manifest.Files{"PLUGIN.md": []byte(doc)})
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 1)
	assert.Empty(t, rep.Cases[0].Failures)
	assert.Equal(t, "smoke", rep.Cases[0].File)
	line := strings.Count(doc[:strings.Index(doc, "  - name: balance")], "\n") + 1
	assert.Equal(t, "PLUGIN.md", rep.Cases[0].Pos.File)
	assert.Equal(t, line, rep.Cases[0].Pos.Line)
}

func TestMatchAndNoCases(t *testing.T) {
	rep := plugintest.RunFiles(context.Background(), demo(passing), plugintest.Options{
		Match: func(file, name string) bool { return strings.Contains(name, "login") },
	})
	assert.Len(t, rep.Cases, 2)
	files := demo(passing)
	delete(files, "tests/cases.yaml")
	rep = run(t, files)
	assert.False(t, rep.OK(), "a document without cases does not pass")
	var b bytes.Buffer
	rep.Write(&b, false)
	assert.Contains(t, b.String(), "no test cases")
}

// A request to an https web origin never leaves the machine either: it
// reaches the origin's loopback replay server, and a case that records no
// exchange for it fails naming the request.
func TestHTTPSWebRequestIsCaught(t *testing.T) {
	files := demo(`cases:
  - name: secure page
    tool: secure
    expect:
      error: request
`)
	files["PLUGIN.md"] = []byte(strings.Replace(demoPlugin, "    - http://news.example.edu.cn\n", "    - http://news.example.edu.cn\n    - https://secure.example.edu.cn\n", 1))
	files["tools/secure.yaml"] = []byte("description: Reads a secure page.\neffect: read\nsteps:\n  - request: {url: \"https://secure.example.edu.cn/x\"}\n  - return: .status\n")
	rep := run(t, files)
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 1)
	assert.Contains(t, strings.Join(rep.Cases[0].Failures, "\n"), "no recorded exchange answers GET https://secure.example.edu.cn/x (web origin https://secure.example.edu.cn)")
}

// TestCasesSeeTheCaller: a case runs its call as the registry does, so
// the steps see the case's actor, the agent's turn and how the user
// answered ($actor, $turn, $grant): approve: true is once.
func TestCasesSeeTheCaller(t *testing.T) {
	doc := "---\nid: who\nname: W\ndescription: d\nversion: 1.0.0\n---\nI.\n\n```yaml tool send\ndescription: d\neffect: write\n" +
		"steps:\n  - return: '{actor: $actor, tainted: $turn.tainted, grant: $grant}'\n```\n\n```yaml test caller\ncases:\n" +
		"  - name: agent\n    tool: send\n    actor: agent\n    trust: official\n    tainted: true\n    approve: true\n" +
		"    expect:\n      output: {actor: agent, tainted: true, grant: once}\n" +
		"  - name: user\n    tool: send\n    expect:\n      output: {actor: user, tainted: null, grant: null}\n```\n"
	rep := run(t, manifest.Files{"PLUGIN.md": []byte(doc)})
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 2)
	for _, c := range rep.Cases {
		assert.Empty(t, c.Failures, c.Name)
	}
}
