package review

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUnifiedDiffBoundsAndSafety: text over MaxDiffInput is compared up to
// the bound (the diff says so), and a control character in a text never
// reaches the diff's lines.
func TestUnifiedDiffBoundsAndSafety(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < MaxDiffInput; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	huge := b.String()
	lines := unifiedDiff("a\n"+huge, "b\n"+huge)
	assert.Equal(t, []string{"@@ -1,3 +1,3 @@", "-a", "+b", " line 0", " line 1"}, lines[:5])
	assert.Contains(t, lines[len(lines)-1], "only the first 65536 bytes of each text were compared")
	lines = unifiedDiff("a\n", "a\x1b[2J\u202e\n")
	for _, l := range lines {
		assert.NotContains(t, l, "\x1b")
		assert.NotContains(t, l, "\u202e")
	}
	assert.Nil(t, unifiedDiff("same", "same"))
}
