package steps_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/pkuinfo/harness/internal/limits"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsUpToDate: docs/plugin-format.md holds the generated kinds
// reference and limits table (go test ./steps -update rewrites them).
func TestDocsUpToDate(t *testing.T) {
	path := filepath.Join("..", "docs", "plugin-format.md")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(b)
	want := between(t, doc, "kinds", steps.Markdown(steps.Builtin()))
	want = between(t, want, "limits", limits.Markdown())
	if *update && want != doc {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		doc = want
	}
	assert.Equal(t, want, doc, "docs/plugin-format.md is out of date: go test ./steps -update")
	lim := reflect.TypeOf(steps.Limits{})
	for i := range lim.NumField() {
		if lim.Field(i).Type.Kind() == reflect.Func {
			continue // the clock, not a limit
		}
		name := lim.Field(i).Name
		name = strings.ToLower(name[:1]) + name[1:]
		if strings.HasPrefix(name, "hTML") {
			name = "html" + name[4:]
		}
		if strings.HasPrefix(name, "kV") {
			name = "kv" + name[2:]
		}
		assert.True(t, unicode.IsLower(rune(name[0])))
		assert.Contains(t, doc, "| `"+name+"` |", "docs/plugin-format.md lacks limit %s", name)
	}
}

// between replaces what doc holds between the NAME markers.
func between(t *testing.T, doc, name, body string) string {
	t.Helper()
	begin, end := "<!-- "+name+":begin -->\n", "<!-- "+name+":end -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	require.True(t, i >= 0 && j > i, "docs/plugin-format.md needs the %s markers", name)
	return doc[:i+len(begin)] + body + doc[j:]
}

// The limits table, the defaults and a tool's limits: agree: every
// default comes from the table, and a tool may lower exactly the marked ones.
func TestLimitsTable(t *testing.T) {
	d := steps.DefaultLimits()
	for _, l := range limits.Table {
		v, ok := d.Get(l.Name)
		require.True(t, ok, l.Name)
		assert.Equal(t, l.Default, v, l.Name)
	}
	assert.Equal(t, 15*time.Second, d.RequestTimeout)
	assert.Equal(t, int64(4<<20), d.ResponseBytes)
	assert.Equal(t, 50, d.Requests)
	assert.Equal(t, []string{"deadline", "requestTimeout", "responseBytes", "requests", "steps", "iterations", "pages", "items", "output"}, limits.ToolNames())
	_, ok := d.Get("nope")
	assert.False(t, ok)
	assert.True(t, d.Set("pages", 3))
	assert.Equal(t, 3, d.Pages)
	rb, _ := limits.Get("responseBytes")
	assert.Equal(t, "4 MiB", rb.Text(rb.Default))
}

// TestCapsWords: the reference and explain say the same words for the same
// capabilities.
func TestCapsWords(t *testing.T) {
	assert.Equal(t, []string{"sends requests", "needs the kv ability", "ends the tool", "holds sub-steps"},
		steps.Caps{Network: true, KV: true, Ends: true, Nests: true}.Words())
	assert.Empty(t, steps.Caps{}.Words())
	s, ok := steps.Builtin().Spec("kv_set")
	require.True(t, ok)
	assert.Contains(t, steps.Markdown(steps.Builtin()), "It "+strings.Join(s.Caps.Words(), ", ")+".")
}
