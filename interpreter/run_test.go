package interpreter_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentRuns runs one compiled Program from many goroutines, each
// with its own proxy call and input; run with -race.
func TestConcurrentRuns(t *testing.T) {
	p := readSkeleton(t)
	prog := compile(t, p)
	srv := campus(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"rooms":[{"name":%q,"capacity":%d}]}`, r.URL.Path, len(r.URL.Path))
	})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := fmt.Sprintf("b%d", i)
			res, err := prog.Run(context.Background(), "free", map[string]any{"building": b},
				interpreter.WithTransport(call(t, p, srv, "portal")))
			if err != nil {
				errs <- err
				return
			}
			path := "/api/classrooms/" + b + "/free"
			want := fmt.Sprintf(`{"building":%q,"rooms":[{"room":%q,"seats":%d}]}`, b, path, len(path))
			if string(res.JSON) != want {
				errs <- fmt.Errorf("run %d: got %s, want %s", i, res.JSON, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestPrefs(t *testing.T) {
	files := manifest.Files{
		"PLUGIN.md": []byte("---\nid: p\nname: P\ndescription: P.\nversion: 1.0.0\npreferences:\n" +
			"  - { name: campus, kind: enum, title: Campus, options: [yanyuan, changping], default: yanyuan }\n" +
			"  - { name: limit, kind: integer, title: Limit, default: 5 }\n---\nI.\n"),
		"tools/show.yaml": []byte("description: T.\neffect: read\nsteps:\n  - return: $prefs\n"),
	}
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), "%s", l.Error())
	prog := compile(t, p)
	res, err := run(t, prog, "show", nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"campus":"yanyuan","limit":5}`, string(res.JSON))
	res, err = run(t, prog, "show", nil, interpreter.WithPrefs(map[string]any{"campus": "changping"}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"campus":"changping","limit":5}`, string(res.JSON))
	_, err = run(t, prog, "show", nil, interpreter.WithPrefs(map[string]any{"limit": "many"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `preference "limit"`)
}

func TestTraceRedacts(t *testing.T) {
	p := doc(t, "", map[string]string{"t": tool("  - jq: '\"token=s3cr3t-session and more\"'\n  - jq: 'error(\"s3cr3t-session\")'\n")})
	prog := compile(t, p)
	var buf bytes.Buffer
	redact := func(s string) string { return strings.ReplaceAll(s, "s3cr3t-session", "[redacted]") }
	_, err := run(t, prog, "t", nil, interpreter.WithTrace(interpreter.TraceWriter(&buf, redact)), interpreter.WithRedact(redact))
	require.Error(t, err)
	assert.NotContains(t, buf.String()+err.Error(), "s3cr3t")
	assert.Contains(t, buf.String(), "trace: tools/t.yaml:6:5: step 1 (jq)")
	assert.Contains(t, buf.String(), "[redacted]")
	assert.Contains(t, err.Error(), "tools/t.yaml:7:5: step 2 (jq): jq error: [redacted]")
}

func TestUnknownTool(t *testing.T) {
	prog := compile(t, readSkeleton(t))
	_, err := run(t, prog, "nope", nil)
	var ue *interpreter.UnknownToolError
	require.ErrorAs(t, err, &ue)
}

func TestDeadlineNamesStep(t *testing.T) {
	p := doc(t, "", map[string]string{"t": tool("  - jq: '1'\n  - jq: 'def f: f; f'\n")})
	lim := interpreter.DefaultLimits()
	lim.Deadline = 100 * time.Millisecond
	prog := compile(t, p, interpreter.WithLimits(lim))
	_, err := run(t, prog, "t", nil)
	var se *interpreter.StepError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 2, se.Index)
	le, ok := interpreter.IsLimit(err)
	require.True(t, ok)
	assert.Equal(t, "deadline", le.Limit)
}

func TestFieldBytes(t *testing.T) {
	p := doc(t, "", map[string]string{"t": tool("  - jq: '{body: (\"<p>\" + (\"x\" * 100) + \"</p>\")}'\n  - html: { select: p }\n")})
	lim := interpreter.DefaultLimits()
	lim.FieldBytes = 10
	prog := compile(t, p, interpreter.WithLimits(lim))
	res, err := run(t, prog, "t", nil)
	require.NoError(t, err)
	assert.Equal(t, `["xxxxxxxxxx"]`, string(res.JSON))
}

func TestNoTransport(t *testing.T) {
	prog := compile(t, readSkeleton(t))
	_, err := run(t, prog, "free", map[string]any{"building": "x"})
	require.ErrorContains(t, err, "no transport")
}

// A tool called without input is checked against its schema as any input
// is, each time (the verdict on {} is found once and kept).
func TestEmptyInputChecked(t *testing.T) {
	p := doc(t, "", map[string]string{
		"needs": "description: T.\neffect: read\ninput:\n  type: object\n  properties: { q: { type: string } }\n  required: [q]\nsteps:\n  - return: '$input'\n",
		"free":  tool("  - return: '$input'\n"),
	})
	prog := compile(t, p)
	var first string
	for i := range 3 {
		for _, in := range []any{nil, map[string]any{}} {
			_, err := run(t, prog, "needs", in)
			var ie *interpreter.InputError
			require.ErrorAs(t, err, &ie, "run %d", i)
			assert.Contains(t, ie.Msg, "q")
			if first == "" {
				first = err.Error()
			}
			assert.Equal(t, first, err.Error())
		}
		res, err := run(t, prog, "free", nil)
		require.NoError(t, err)
		assert.Equal(t, `{}`, string(res.JSON))
	}
	_, err := run(t, prog, "needs", map[string]any{"q": 1})
	require.Error(t, err, "a non-empty input is validated as before")
	res, err := run(t, prog, "needs", map[string]any{"q": "x"})
	require.NoError(t, err)
	assert.Equal(t, `{"q":"x"}`, string(res.JSON))
}
