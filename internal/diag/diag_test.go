package diag

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListSortsDedupesAndCaps(t *testing.T) {
	var l List
	l.Errorf(Pos{File: "tools/b.yaml", Line: 2, Col: 1}, "b")
	l.Errorf(Pos{File: "PLUGIN.md", Line: 9, Col: 3}, "late")
	l.Warnf(Pos{File: "PLUGIN.md", Line: 1, Col: 1}, "warn")
	l.Errorf(Pos{File: "tools/a.yaml", Line: 1, Col: 1}, "a")
	l.Errorf(Pos{File: "tools/a.yaml", Line: 1, Col: 1}, "a")
	l.Sort()
	require.Equal(t, "PLUGIN.md:1:1: warning: warn\nPLUGIN.md:9:3: late\ntools/a.yaml:1:1: a\ntools/b.yaml:2:1: b", l.Error())
	require.True(t, l.HasErrors())
	require.Len(t, l.Errors(), 3)

	var w List
	w.Warnf(Pos{File: "x", Line: 1}, "only a warning")
	require.False(t, w.HasErrors())
	require.NoError(t, w.Err())

	var big List
	for i := 0; i < MaxErrors+5; i++ {
		big.Errorf(Pos{File: "x", Line: i + 1, Col: 1}, "e")
	}
	require.Len(t, big.Items, MaxErrors)
	require.Equal(t, 5, big.Dropped)
	require.True(t, strings.HasSuffix(big.Error(), "5 more problems were not shown"))
}

func TestPosString(t *testing.T) {
	require.Equal(t, "a.yaml:3:1", Pos{File: "a.yaml", Line: 3}.String())
	require.Equal(t, "a.yaml", Pos{File: "a.yaml"}.String())
}
