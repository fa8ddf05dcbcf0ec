package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `--trace full` and `--trace json` written with a space: the word is the
// trace's value only when the command got one argument too many, wherever
// the flag stood; otherwise it stays an argument.
func TestTraceFlagValueWithSpace(t *testing.T) {
	for _, tc := range []struct {
		trace string
		args  []string
		rest  []string
		value string
	}{
		{"on", []string{"doc", "tool", "full"}, []string{"doc", "tool"}, "full"},
		{"on", []string{"json", "doc", "tool"}, []string{"doc", "tool"}, "json"},
		{"on", []string{"doc", "full"}, []string{"doc", "full"}, ""}, // a tool named full
		{"full", []string{"doc", "tool", "json"}, []string{"doc", "tool", "json"}, ""},
		{"on", []string{"doc", "tool", "other"}, []string{"doc", "tool", "other"}, ""},
	} {
		f := traceFlags{trace: tc.trace}
		rest, v := f.split(tc.args, 2)
		assert.Equal(t, tc.rest, rest, "%v", tc.args)
		assert.Equal(t, tc.value, v, "%v", tc.args)
	}

	doc := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":       "---\nid: tr\nname: T\ndescription: T.\nversion: 1.0.0\n---\nI.\n",
		"tools/full.yaml": "description: F.\neffect: read\nsteps:\n  - return: '\"x\"'\n",
	})
	code, out, errs := runCLI(t, nil, "run", "--trace", "json", doc, "full")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "\"x\"\n", out)
	var e map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(errs)), &e), errs)
	assert.Equal(t, "step", e["event"])
	code, _, errs = runCLI(t, nil, "run", doc, "--trace", "full")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "trace: tools/full.yaml:4:5: step 1 (return)", "a tool named full still runs, traced")
	code, _, errs = runCLI(t, nil, "run", doc, "full", "--trace=fulll")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errs, `--trace takes full or json, not "fulll"`)
}
