package proxy

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hand-off parser splits a value at bytes as strings.FieldsFunc splits
// it at the same runes, valid UTF-8 or not.
func TestHandoffFieldsSplitAsFieldsFunc(t *testing.T) {
	sets := map[string]*byteSet{"?&;#": &querySeps, ";": &segmentSeps, "; ?&#": &refreshSeps, "?&;#,<>\"' \t": &headerSeps}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "=", "?", "&", ";", "#", ",", "<", ">", "\"", "'", " ", "\t", "/", "二", "\xff", "\xe4\xba", "%3B", "tok"}
	for chars, set := range sets {
		isSep := func(r rune) bool { return strings.ContainsRune(chars, r) }
		for c := 0; c < 256; c++ {
			require.Equal(t, c < 0x80 && isSep(rune(c)), set[c], "byte %#x of %q", c, chars)
		}
		for range 5000 {
			var b strings.Builder
			for range r.IntN(16) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			s := b.String()
			var got []string
			for i := 0; i < len(s); {
				part, next := nextField(s, i, set)
				if part != "" {
					got = append(got, part)
				}
				i = next
			}
			want := strings.FieldsFunc(s, isSep)
			require.True(t, slices.Equal(want, got), "%q split at %q: %q, want %q", s, chars, got, want)
		}
	}
}
