package plugintest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tagsDoc = `---
id: tags
name: 标签
description: Repeated query and form parameters, for the runner's tests.
version: 1.0.0
requires: [network]
access:
  web: [http://news.example.edu.cn]
---
Tools for tests.
`

// tagsTool sends tag three times (two in the URL, one from query, in that
// order) and a form body that repeats x.
const tagsTool = `description: Lists by tags, then posts a form.
effect: read
untrusted: true
steps:
  - request: {url: "http://news.example.edu.cn/list?tag=b&tag=a&n=1", query: {tag: c}}
    as: list
  - request: {method: POST, url: "http://news.example.edu.cn/post", body: "x=2&x=1&y=z", contentType: application/x-www-form-urlencoded}
  - return: '{list: $list.body, post: .body}'
`

func tagsFiles(tests string) manifest.Files {
	return manifest.Files{"PLUGIN.md": []byte(tagsDoc), "tools/tags.yaml": []byte(tagsTool), "tests/tags.yaml": []byte(tests)}
}

// A parameter given a list is that parameter repeated, in that order, in
// the query and in the form: the order matters, and one value is not three.
func TestRepeatedParametersReplay(t *testing.T) {
	exchanges := func(tag, x string) string {
		return `
    exchanges:
      - request: {path: /list, query: {tag: ` + tag + `, n: 1}}
        response: {json: {page: 1}}
      - request: {method: POST, path: /post, form: {x: ` + x + `, "y": z}}
        response: {json: {ok: true}}
`
	}
	tests := `cases:
  - name: in order
    tool: tags` + exchanges("[b, a, c]", "[2, 1]") + `    expect:
      output: {list: {page: 1}, post: {ok: true}}
  - name: the query's order differs
    tool: tags` + exchanges("[a, b, c]", "[2, 1]") + `    expect:
      output: {list: {page: 1}, post: {ok: true}}
  - name: one value is not three
    tool: tags` + exchanges("c", "[2, 1]") + `    expect:
      output: {list: {page: 1}, post: {ok: true}}
  - name: the form's order differs
    tool: tags` + exchanges("[b, a, c]", "['1', '2']") + `    expect:
      output: {list: {page: 1}, post: {ok: true}}
`
	rep := run(t, tagsFiles(tests))
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 4)
	assert.Empty(t, rep.Cases[0].Failures)
	unanswered := "no recorded exchange answers GET http://news.example.edu.cn/list?n=1&tag=b&tag=a&tag=c (web origin http://news.example.edu.cn)"
	for _, i := range []int{1, 2} {
		require.NotEmpty(t, rep.Cases[i].Failures, rep.Cases[i].Name)
		assert.Contains(t, strings.Join(rep.Cases[i].Failures, "\n"), unanswered, rep.Cases[i].Name)
	}
	assert.Contains(t, strings.Join(rep.Cases[1].Failures, "\n"), "recorded for http://news.example.edu.cn: GET /list?n=1&tag=a&tag=b&tag=c at tests/tags.yaml:")
	assert.Contains(t, strings.Join(rep.Cases[3].Failures, "\n"), "the form of the request answered by the exchange at tests/tags.yaml:")
	assert.Contains(t, strings.Join(rep.Cases[3].Failures, "\n"), "- x=1\n")
}

// A parameter's list holds scalars, at least one; each problem is at its
// position.
func TestRepeatedParameterErrors(t *testing.T) {
	tests := `cases:
  - tool: tags
    exchanges:
      - request: {path: /list, query: {tag: [], n: [1, [2]], m: [null], k: {a: 1}}}
        response: {json: {}}
    expect: {output: 1}
`
	p, l := manifest.Parse(tagsFiles(tests))
	require.False(t, l.HasErrors(), l.Error())
	_, l = plugintest.Parse(p)
	assert.Equal(t, `tests/tags.yaml:4:45: query value "tag" is an empty list: a repeated parameter lists its values in order (leave out a parameter the request does not have)
tests/tags.yaml:4:56: query value "n" must list strings, numbers or booleans, not a list
tests/tags.yaml:4:66: query value "m" must list strings, numbers or booleans, not null
tests/tags.yaml:4:76: query value "k" must be a string, number or boolean, or a list of them for a repeated parameter, not a mapping`, l.Error())

	ok := `cases:
  - tool: tags
    exchanges:
      - request: {path: /list, query: {tag: [b, 2, true], n: 1}, form: {x: [1]}}
        response: {json: {}}
    expect: {output: 1}
`
	p, l = manifest.Parse(tagsFiles(ok))
	require.False(t, l.HasErrors(), l.Error())
	s, l := plugintest.Parse(p)
	require.False(t, l.HasErrors(), l.Error())
	e := s.Cases()[0].Exchanges[0]
	assert.Equal(t, url.Values{"tag": {"b", "2", "true"}, "n": {"1"}}, e.Query)
	assert.Equal(t, url.Values{"x": {"1"}}, e.Form)
}

// harness record writes a repeated parameter as its list of values in the
// order sent, and the written case replays.
func TestRecordRepeatedParameters(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/list":
			w.Write([]byte(`{"tags": "` + strings.Join(r.URL.Query()["tag"], ",") + `"}`))
		case "/post":
			r.ParseForm()
			w.Write([]byte(`{"x": "` + strings.Join(r.PostForm["x"], ",") + `"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	now := time.Date(2026, 4, 27, 12, 0, 0, 0, time.UTC)
	h := host.New(host.Config{Resolve: map[string]string{"news.example.edu.cn:80": srv.Listener.Addr().String()}, Clock: func() time.Time { return now }})
	files := tagsFiles("cases: [{tool: tags, expect: {output: 1}}]\n")
	delete(files, "tests/tags.yaml")
	p, rec := record(t, h, files, "tags", nil, now)
	require.NoError(t, rec.Err)
	assert.JSONEq(t, `{"list": {"tags": "b,a,c"}, "post": {"x": "2,1"}}`, string(rec.Result))
	assert.Equal(t, []string{"tag=b&tag=a&n=1&tag=c", ""}, got, "the live requests")

	text, err := rec.TestFile(plugintest.WriteOptions{})
	require.NoError(t, err)
	s := string(text)
	assert.Contains(t, s, `query: {n: "1", tag: [b, a, c]}`)
	assert.Contains(t, s, `form: {x: ["2", "1"], y: z}`)
	srv.Close()
	rep := plugintest.Verify(context.Background(), p, "tags", text, plugintest.Options{})
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 1)
	assert.Empty(t, rep.Cases[0].Failures, s)
}
