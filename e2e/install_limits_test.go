package e2e

// Document limits at install: trees and Markdown that would make the
// engine walk or parse without end are refused early.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/gittest"
	"github.com/stretchr/testify/require"
)

// TestRedteamSharedTreeBomb: a git folder whose sub-folders all point to the
// same tree object, six levels deep. The pack is tiny (one tree per level),
// but walking it names 255^5 folders and 256 times as many files: the file
// and folder limits must stop the walk early, not the deadline or the
// machine's memory.
func TestRedteamSharedTreeBomb(t *testing.T) {
	t.Parallel()
	s := gittest.New(t)
	for _, filter := range []bool{true, false} {
		name := fmt.Sprintf("evil/bomb%v", filter)
		dir := s.Repo(name, filter)
		md := s.Blob(dir, rtDoc("bomb", "1.0.0", "", ""))
		x := s.Blob(dir, "x")
		var lines []string
		for i := 0; i < 256; i++ {
			lines = append(lines, fmt.Sprintf("100644 blob %s\tf%03d", x, i))
		}
		tree := s.Mktree(dir, lines...)
		for level := 0; level < 4; level++ {
			lines = lines[:0]
			for i := 0; i < 256; i++ {
				lines = append(lines, fmt.Sprintf("040000 tree %s\td%03d", tree, i))
			}
			tree = s.Mktree(dir, lines...)
		}
		lines = []string{"100644 blob " + md + "\tPLUGIN.md"}
		for i := 0; i < 255; i++ {
			lines = append(lines, fmt.Sprintf("040000 tree %s\ta%03d", tree, i))
		}
		top := s.Mktree(dir, lines...)
		s.CommitTree(dir, "main", s.Mktree(dir, "040000 tree "+top+"\tp"))

		home := t.TempDir()
		r := harnessGuarded(t, home, gitEnv(s), 40*time.Second, "install", "--yes", "https://github.com/"+name+"/tree/main/p")
		require.Equal(t, 1, r.code, r.stdout)
		require.Contains(t, r.stderr, "more than 256 files")
		storeEmpty(t, home)
	}
}

// TestRedteamMarkdownNestingBomb: a URL document whose body is one line of
// "> > > …" (a megabyte of block quotes nested in each other) made the
// Markdown parser run for minutes in install, review and the daily update.
// Such a line is refused before the body is parsed.
func TestRedteamMarkdownNestingBomb(t *testing.T) {
	t.Parallel()
	var body atomic.Value
	body.Store(rtDoc("nest", "1.0.0", "", "```yaml tool t\n"+rtTool+"```\n"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		io.WriteString(w, body.Load().(string))
	}))
	t.Cleanup(srv.Close)
	link := srv.URL + "/nest/PLUGIN.md"
	bomb := rtDoc("nest", "1.1.0", "", "Intro.\n"+strings.Repeat("> ", 500000)+"x\n")

	home := t.TempDir()
	r := harnessGuarded(t, home, nil, 60*time.Second, "install", "--yes", link)
	require.Equal(t, 0, r.code, r.stderr)
	installed := rtState(t, home, "nest")["hash"]
	body.Store(bomb)
	for _, cmd := range [][]string{{"review", link}, {"lint", writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": bomb})}} {
		r := harnessGuarded(t, home, nil, 60*time.Second, cmd...)
		require.Equal(t, 1, r.code, "%v", cmd)
		require.Contains(t, r.stderr, "nests block quotes or list items more than 32 levels deep", cmd)
	}
	res := rtUpdate(t, home, nil, "nest")
	require.Equal(t, "failed", res["status"], res)
	require.Contains(t, res["error"], "levels deep")
	require.Equal(t, installed, rtState(t, home, "nest")["hash"])
	r = harnessGuarded(t, t.TempDir(), nil, 60*time.Second, "install", "--yes", link)
	require.Equal(t, 1, r.code)
}
