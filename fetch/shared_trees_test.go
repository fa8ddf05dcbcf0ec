package fetch

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFetchGitSharedTrees: folders that all point to one tree object name
// far more paths than the pack holds objects. The walk counts the files and
// folders it visits, so both a file bomb and a bomb of empty folders stop at
// the limit, long before the deadline.
func TestFetchGitSharedTrees(t *testing.T) {
	t.Parallel()
	s := newGitServer(t)
	dir := s.repo("evil/shared", true)
	md := s.blob(dir, doc("p"))
	x := s.blob(dir, "x")
	fan := func(leaf string) string {
		tree := leaf
		for level := 0; level < 4; level++ {
			var lines []string
			for i := 0; i < 200; i++ {
				lines = append(lines, fmt.Sprintf("040000 tree %s\td%03d", tree, i))
			}
			tree = s.mktree(dir, lines...)
		}
		return s.mktree(dir, "100644 blob "+md+"\tPLUGIN.md", "040000 tree "+tree+"\ta", "040000 tree "+tree+"\tb")
	}
	var files []string
	for i := 0; i < 200; i++ {
		files = append(files, fmt.Sprintf("100644 blob %s\tf%03d", x, i))
	}
	s.commitTree(dir, "files", s.mktree(dir, "040000 tree "+fan(s.mktree(dir, files...))+"\tp"))
	s.commitTree(dir, "folders", s.mktree(dir, "040000 tree "+fan(s.git(dir, nil, "mktree"))+"\tp"))

	for branch, want := range map[string]string{"files": "more than 256 files", "folders": "more than 256 folders"} {
		for _, noFilter := range []bool{false, true} {
			res, err := FetchGit(context.Background(), mustLink(t, "https://github.com/evil/shared/tree/"+branch+"/p"), GitOptions{Base: s.Base(), NoFilter: noFilter})
			require.Error(t, err, branch)
			assert.Nil(t, res)
			assert.ErrorIs(t, err, ErrLimit, branch)
			assert.ErrorContains(t, err, want, branch)
		}
	}
}
