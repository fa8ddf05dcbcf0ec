package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// traceDoc is a document with a template slip: `limit: $input.limit`
// written without ${ }, so the literal text is sent.
func traceDoc(t *testing.T) string {
	return writeFiles(t, filepath.Join(t.TempDir(), "doc"), map[string]string{
		"PLUGIN.md": "---\nid: trace-doc\nname: Trace\ndescription: A document to trace.\nversion: 1.0.0\naccess:\n  campus: [portal]\n---\nUse it.\n",
		"tools/notices.yaml": `description: Notices.
effect: read
input: { type: object, properties: { limit: { type: integer } } }
steps:
  - request:
      service: portal
      path: /api/notices
      query: { limit: $input.limit, lang: zh }
      headers: { Accept: application/json }
    as: res
  - jq: '[.body.items[] | {title: .t}]'
`,
	})
}

// TestRunTraceShowsRequests runs a tool whose server echoes the session it
// receives (in the body, a header and a cookie) with --trace, --trace full,
// --trace json and --trace-json: each shows the request as sent (the slip
// visible as limit=%24input.limit), its status and the answer, and no
// credential of the secrets file appears anywhere.
func TestRunTraceShowsRequests(t *testing.T) {
	home := t.TempDir()
	doc := traceDoc(t)
	long := strings.Repeat("长标题", 80)
	p := newPortal(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo", r.Header.Get("Cookie")+" "+r.Header.Get("Authorization"))
		http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: sessionCookie})
		_, _ = io.WriteString(w, `{"items":[{"t":"`+long+`"},{"t":"b"}],"echo":"`+r.Header.Get("Cookie")+` `+r.Header.Get("Authorization")+`","limit":"`+r.URL.Query().Get("limit")+`"}`)
	})
	services, secrets := serviceFiles(t, p.srv.URL)
	run := func(trace ...string) result {
		args := append([]string{"run", doc, "notices", "--input", `{"limit":3}`, "--services", services, "--secrets", secrets}, trace...)
		r := harness(t, home, nil, args...)
		require.Equal(t, 0, r.code, "%v: %s", trace, r.stderr)
		requireNoSecret(t, r)
		return r
	}
	lines := run("--trace")
	require.Contains(t, lines.stderr, "trace: request GET portal /api/notices?lang=zh&limit=%24input.limit")
	require.Contains(t, lines.stderr, "{Accept: application/json}")
	require.Regexp(t, `trace:   200 http://127\.0\.0\.1:\d+/api/notices\?lang=zh&limit=%24input\.limit `, lines.stderr)
	require.Contains(t, lines.stderr, "Content-Type: application/json")
	require.Contains(t, lines.stderr, "tools/notices.yaml:5:5: step 1 (request)")
	require.Contains(t, lines.stderr, "tools/notices.yaml:11:5: step 2 (jq)")
	require.NotContains(t, lines.stderr, long, "a line trace cuts outputs and bodies")
	require.NotContains(t, lines.stderr, "X-Echo", "a line trace shows selected headers")

	full := run("--trace", "full")
	require.Contains(t, full.stderr, long, "--trace full shows each output whole")
	require.Contains(t, full.stderr, "X-Echo: JSESSIONID=[redacted] [redacted]", "--trace full shows every header the step saw, redacted")
	require.Contains(t, run("--trace=full").stderr, long, "--trace=full is --trace full")
	for _, args := range [][]string{{"--trace", "json"}, {"--trace=json"}, {"--trace-json"}} {
		r := run(args...)
		var events []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			var e map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &e), "%v: every line is one JSON object: %s", args, line)
			events = append(events, e)
		}
		require.Len(t, events, 3, "%v: a request and two steps", args)
		require.NotEmpty(t, p.requests())
		req := events[0]
		require.Equal(t, "request", req["event"])
		require.Equal(t, "GET", req["method"])
		require.Equal(t, "portal", req["service"])
		require.Equal(t, "/api/notices?lang=zh&limit=%24input.limit", req["path"])
		require.Equal(t, map[string]any{"lang": []any{"zh"}, "limit": []any{"$input.limit"}}, req["query"])
		resp := req["response"].(map[string]any)
		require.EqualValues(t, 200, resp["status"])
		require.Contains(t, resp["body"], long)
		require.Equal(t, "step", events[1]["event"])
		require.Equal(t, "request", events[1]["kind"])
		require.Equal(t, "tools/notices.yaml:5:5", events[1]["pos"])
		require.Equal(t, "jq", events[2]["kind"])
		out := events[2]["output"].([]any)
		require.Equal(t, long, out[0].(map[string]any)["title"], "a JSON trace holds each output whole")
	}
}
