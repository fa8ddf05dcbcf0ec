package interpreter_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A traced run reports each request: the request as the step built it,
// what came back, and a request that failed with its error; every text
// passes the run's redactor, in each mode.
func TestTraceRequests(t *testing.T) {
	srv := campus(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone" {
			// A connection that dies: the request fails.
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-Note", "PRIVATE-WORD")
		_, _ = io.WriteString(w, "<p>"+strings.Repeat("x", 300)+" PRIVATE-WORD</p>")
	})
	p := doc(t, "access:\n  campus: [portal]\n", map[string]string{
		"ok":   tool("  - request: { service: portal, method: POST, path: /page, query: { q: $input.q, w: PRIVATE-WORD }, form: { a: '1' } }\n"),
		"fail": tool("  - request: { service: portal, path: /gone }\n"),
	})
	prog := compile(t, p)
	redact := func(s string) string { return strings.ReplaceAll(s, "PRIVATE-WORD", "[redacted]") }
	trace := func(tool string, mode interpreter.TraceMode) string {
		var buf bytes.Buffer
		opts := append(interpreter.NewTracer(&buf, redact, mode).Options(), interpreter.WithTransport(call(t, p, srv, "portal")), interpreter.WithRedact(redact))
		_, _ = run(t, prog, tool, map[string]any{}, opts...)
		require.NotContains(t, buf.String(), "PRIVATE-WORD")
		return buf.String()
	}

	lines := trace("ok", interpreter.TraceLines)
	assert.Contains(t, lines, "trace: request POST portal /page?q=%24input.q&w=[redacted] body \"a=1\"\n")
	assert.Regexp(t, `trace:   200 http://127\.0\.0\.1:\d+/page\?q=%24input\.q&w=\[redacted\] \S+ \{Content-Type: text/html, Content-Length: \d+\} body 320 bytes "<p>x+…\n`, lines)
	assert.Contains(t, lines, "trace: tools/ok.yaml:6:5: step 1 (request)")
	assert.NotContains(t, lines, "X-Note")

	full := trace("ok", interpreter.TraceFull)
	assert.Contains(t, full, strings.Repeat("x", 300)+" [redacted]</p>")
	assert.Contains(t, full, "X-Note: [redacted]")

	js := trace("ok", interpreter.TraceJSON)
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(js), "\n") {
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		events = append(events, e)
	}
	require.Len(t, events, 2)
	assert.Equal(t, map[string]any{"q": []any{"$input.q"}, "w": []any{"[redacted]"}}, events[0]["query"])
	assert.Equal(t, "a=1", events[0]["body"])
	assert.Equal(t, "application/x-www-form-urlencoded", events[0]["contentType"])
	resp := events[0]["response"].(map[string]any)
	assert.Equal(t, "<p>"+strings.Repeat("x", 300)+" [redacted]</p>", resp["body"])
	assert.Equal(t, "[redacted]", resp["headers"].(map[string]any)["X-Note"])
	out := events[1]["output"].(map[string]any)
	assert.EqualValues(t, 200, out["status"])

	failed := trace("fail", interpreter.TraceLines)
	assert.Contains(t, failed, "trace: request GET portal /gone\n")
	assert.Regexp(t, `trace:   error after \S+: request to http://127\.0\.0\.1:\d+/gone failed: `, failed)
	assert.Regexp(t, `trace: tools/fail.yaml:6:5: step 1 \(request\) \S+ error: `, failed)
	fj := trace("fail", interpreter.TraceJSON)
	assert.Contains(t, fj, `"event":"request"`)
	assert.Contains(t, fj, `"error":"request to http://127.0.0.1:`)
}

func TestParseTraceMode(t *testing.T) {
	for in, want := range map[string]interpreter.TraceMode{"": interpreter.TraceLines, "on": interpreter.TraceLines, "full": interpreter.TraceFull, "json": interpreter.TraceJSON} {
		got, err := interpreter.ParseTraceMode(in)
		require.NoError(t, err)
		assert.Equal(t, want, got, in)
	}
	_, err := interpreter.ParseTraceMode("fulll")
	assert.ErrorContains(t, err, `--trace takes full or json, not "fulll"`)
}
