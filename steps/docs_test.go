package steps_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	beginKinds = "<!-- kinds:begin -->\n"
	endKinds   = "<!-- kinds:end -->"
)

// TestDocsUpToDate: docs/plugin-format.md holds the generated kinds reference and
// names every limit (go test ./steps -update rewrites the kinds part).
func TestDocsUpToDate(t *testing.T) {
	path := filepath.Join("..", "docs", "plugin-format.md")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(b)
	i, j := strings.Index(doc, beginKinds), strings.Index(doc, endKinds)
	require.True(t, i >= 0 && j > i, "docs/plugin-format.md needs the kinds markers")
	want := doc[:i+len(beginKinds)] + steps.Markdown(steps.Builtin()) + doc[j:]
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
