package cli

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExplainLists(t *testing.T) {
	code, out, errs := runCLI(t, nil, "explain")
	require.Equal(t, 0, code, errs)
	require.Empty(t, errs)
	lines := strings.Split(out, "\n")
	for _, k := range steps.Builtin().Kinds() {
		s, _ := steps.Builtin().Spec(k)
		found := false
		for _, ln := range lines {
			if f := strings.Fields(ln); len(f) > 1 && f[0] == k {
				found = true
				assert.True(t, strings.HasPrefix(s.Summary, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(ln), k))), ln)
			}
		}
		assert.True(t, found, "kind %s is listed", k)
	}
	assert.Contains(t, out, "as: NAME")
	// The request summary is cut after its first sentence.
	assert.Contains(t, out, "a URL under a declared web origin.\n")
	assert.NotContains(t, out, "Output {status")
}

func TestExplainKind(t *testing.T) {
	for _, k := range steps.Builtin().Kinds() {
		s, _ := steps.Builtin().Spec(k)
		code, out, errs := runCLI(t, nil, "explain", k)
		require.Equal(t, 0, code, errs)
		assert.True(t, strings.HasPrefix(out, k+": "), out)
		for _, f := range s.Fields() {
			assert.Contains(t, out, "\n  "+f.Name+" ("+f.Type.Name(), "%s field %s", k, f.Name)
		}
		for _, ln := range strings.Split(s.Example, "\n") {
			assert.Contains(t, out, "\n  "+ln+"\n", "%s example", k)
		}
		for _, ln := range strings.Split(out, "\n") {
			if !strings.HasPrefix(ln, "  ") { // prose, not the example
				assert.LessOrEqual(t, len([]rune(ln)), 90, "%s: %q", k, ln)
			}
		}
	}
	_, out, _ := runCLI(t, nil, "explain", "request")
	for _, want := range []string{"It sends requests.", "  method (GET|HEAD|POST|PUT|PATCH|DELETE, default GET)\n      HTTP method\n",
		"  service (string)\n      campus service from access.campus (with path)\n", "Example:\n  - request:\n"} {
		assert.Contains(t, out, want)
	}
	_, out, _ = runCLI(t, nil, "explain", "foreach")
	assert.Contains(t, out, "  in (jq, required)\n")
	_, out, _ = runCLI(t, nil, "explain", "return")
	assert.Contains(t, out, "It ends the tool.\n\nValue: a jq program.\n")
	assert.NotContains(t, out, "Fields:")
}

func TestExplainModifier(t *testing.T) {
	code, out, _ := runCLI(t, nil, "explain", "if")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "if is a modifier")
	assert.Contains(t, out, "binds its as name to null")
	assert.Contains(t, out, "if (jq): A jq condition")
}

func TestExplainUnknown(t *testing.T) {
	code, out, errs := runCLI(t, nil, "explain", "reqest")
	assert.Equal(t, ExitUsage, code)
	assert.Empty(t, out)
	assert.Equal(t, "harness: unknown step kind \"reqest\" (did you mean \"request\"?)\n", errs)
	code, _, errs = runCLI(t, nil, "explain", "zzzzzzzz")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errs, "(kinds: fail, foreach, html")
	code, _, _ = runCLI(t, nil, "explain", "jq", "html")
	assert.Equal(t, ExitUsage, code)
}
