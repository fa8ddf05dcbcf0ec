package steps

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFastPathAgrees: programs evaluated without gojq give gojq's answer.
func TestFastPathAgrees(t *testing.T) {
	lim := DefaultLimits()
	values := []any{nil, 1, "x", map[string]any{"a": map[string]any{"b": 2}, "status": 200, "s": "x"},
		map[string]any{"status": 200.0}, map[string]any{"status": "200"}, []any{1}, map[string]any{"a": []any{}}}
	for _, src := range []string{".", ".a", ".a.b", "$input.a", "$input", ".status != 200", ".status == 200", `.s == "x"`,
		". == null", ".a.b != null", "$input.a.b == 2", `.["a"]`, ".a?", ".a[]", "$prefs == true", ".status == 2e2",
		"{a: .a, b: $input.s, status}", "{a: .a.b}", `{"a": 1}`, "{a: .a[]}", "{(.s): 1}", "{$prefs}", "true", "null", "200", `"x"`, "1.5"} {
		sc := NewScope("input", "prefs")
		var l diag.List
		q := compileJQ(src, sc, &lim, func(int) diag.Pos { return diag.Pos{} }, &l)
		require.False(t, l.HasErrors(), "%s: %s", src, l.Error())
		slow := *q
		slow.fast = nil
		for _, v := range values {
			f := &Frame{Vars: []any{v, true}, Limits: &lim}
			got, gerr := q.First(context.Background(), f, v)
			want, werr := slow.First(context.Background(), f, v)
			assert.Equal(t, werr != nil, gerr != nil, "%s on %v", src, v)
			if werr == nil {
				assert.Equal(t, want, got, "%s on %v", src, v)
			} else {
				assert.Equal(t, werr.Error(), gerr.Error())
			}
		}
	}
}
