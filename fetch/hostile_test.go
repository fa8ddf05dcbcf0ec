package fetch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFetchGitHostile serves hostile repositories; each is refused with a
// clear error (and, at install, nothing is stored: see the store tests).
func TestFetchGitHostile(t *testing.T) {
	t.Parallel()
	s := newGitServer(t)
	dir := s.repo("evil/repo", true)
	base := map[string]string{"p/PLUGIN.md": doc("p")}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	random := make([]byte, 2<<20)
	_, _ = rand.Read(random)
	gl := s.commit(dir, "sub-target", base)

	cases := []struct {
		branch string
		files  map[string]string
		want   string
		is     error
	}{
		{"symlink-out", with(map[string]string{"p/link": "symlink:../../../etc/passwd"}), `"link" is a symbolic link`, ErrRefused},
		{"symlink-folder", map[string]string{"real/PLUGIN.md": doc("r"), "p": "symlink:real"}, `"p" is a symbolic link`, ErrRefused},
		{"submodule", with(map[string]string{"p/vendor": "gitlink:" + gl}), `"vendor" is a submodule`, ErrRefused},
		{"dot-git-upper", with(map[string]string{"p/.GIT/config": "x"}), `a .git entry (".GIT")`, ErrRefused},
		{"dot-git-dot", with(map[string]string{"p/sub/.git./hooks": "x"}), `a .git entry (".git.")`, ErrRefused},
		{"dot-git-short", with(map[string]string{"p/GIT~1/config": "x"}), `a .git entry ("GIT~1")`, ErrRefused},
		{"dot-git-ignorable", with(map[string]string{"p/.g\u200cit/config": "x"}), "a .git entry", ErrRefused},
		{"case-collision", with(map[string]string{"p/Tool.yaml": "a", "p/tool.yaml": "b"}), "collide", ErrRefused},
		{"folder-collision", with(map[string]string{"p/Tools/a.yaml": "a", "p/tools/b.yaml": "b"}), "collide", ErrRefused},
		{"nfd-name", with(map[string]string{"p/cafe\u0301.md": "a"}), "not in Unicode NFC form", ErrRefused},
		{"lfs", with(map[string]string{"p/data.json": "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n"}), "Git LFS pointer", ErrRefused},
		{"huge-file", with(map[string]string{"p/big.bin": string(random)}), "1048576 allowed", ErrLimit},
		{"deep", with(map[string]string{"p/a/b/c/d/e/f/g.md": "x"}), "deeper than 6 components", ErrLimit},
		{"colon", with(map[string]string{"p/a:b": "x"}), "contains '\\', '/', ':' or NUL", ErrRefused},
	}
	many := with(nil)
	for i := 0; i < 257; i++ {
		many[fmt.Sprintf("p/f%03d.md", i)] = "x"
	}
	cases = append(cases, struct {
		branch string
		files  map[string]string
		want   string
		is     error
	}{"many-files", many, "more than the 256 files allowed", ErrLimit})

	// The depth-1 fallback takes the same path checks; a sample of it.
	fallback := map[string]bool{"symlink-out": true, "submodule": true, "dot-git-upper": true, "huge-file": true, "many-files": true}
	for _, c := range cases {
		s.commit(dir, c.branch, c.files)
	}
	for _, c := range cases {
		for _, noFilter := range []bool{false, true} {
			if noFilter && !fallback[c.branch] {
				continue
			}
			t.Run(fmt.Sprintf("%s/nofilter=%v", c.branch, noFilter), func(t *testing.T) {
				res, err := FetchGit(context.Background(), mustLink(t, "https://github.com/evil/repo/tree/"+c.branch+"/p"), GitOptions{Base: s.Base(), NoFilter: noFilter})
				require.Error(t, err)
				assert.Nil(t, res)
				assert.ErrorIs(t, err, c.is)
				assert.Contains(t, err.Error(), c.want)
			})
		}
	}
}

// TestFetchGitCraftedTrees uses trees the porcelain refuses to write.
func TestFetchGitCraftedTrees(t *testing.T) {
	t.Parallel()
	s := newGitServer(t)
	dir := s.repo("evil/crafted", true)
	md := s.blob(dir, doc("p"))
	x := s.blob(dir, "secret")
	for name, want := range map[string]string{
		"..":   "escapes the folder",
		".":    "escapes the folder",
		".git": "a .git entry",
		"a\\b": "contains '\\'",
	} {
		inner := s.mktree(dir, "100644 blob "+md+"\tPLUGIN.md", "100644 blob "+x+"\t"+name)
		root := s.mktree(dir, "040000 tree "+inner+"\tp")
		branch := "crafted-" + strings.Map(func(r rune) rune {
			if r == '.' || r == '\\' {
				return 'x'
			}
			return r
		}, name)
		s.commitTree(dir, branch, root)
		_, err := FetchGit(context.Background(), mustLink(t, "https://github.com/evil/crafted/tree/"+branch+"/p"), GitOptions{Base: s.Base()})
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ErrRefused, name)
		assert.Contains(t, err.Error(), want, name)
	}
	// A file and a folder of the same name.
	sub := s.mktree(dir, "100644 blob "+x+"\tb")
	inner0 := s.mktree(dir, "100644 blob "+md+"\tPLUGIN.md", "100644 blob "+x+"\ta", "040000 tree "+sub+"\ta")
	s.commitTree(dir, "filedir", s.mktree(dir, "040000 tree "+inner0+"\tp"))
	_, err0 := FetchGit(context.Background(), mustLink(t, "https://github.com/evil/crafted/tree/filedir/p"), GitOptions{Base: s.Base()})
	assert.ErrorContains(t, err0, "collide")

	// Two entries of the same name (a tree git fsck would reject).
	inner := s.mktree(dir, "100644 blob "+md+"\tPLUGIN.md", "100644 blob "+x+"\tPLUGIN.md")
	root := s.mktree(dir, "040000 tree "+inner+"\tp")
	s.commitTree(dir, "dup", root)
	_, err := FetchGit(context.Background(), mustLink(t, "https://github.com/evil/crafted/tree/dup/p"), GitOptions{Base: s.Base()})
	assert.ErrorContains(t, err, "collide")
}

// TestFetchGitBombs: a file that compresses well is refused before it is
// inflated; a folder of 100k files is refused at the listing.
func TestFetchGitBombs(t *testing.T) {
	t.Parallel()
	s := newGitServer(t)
	dir := s.repo("evil/bomb", true)
	zeros := s.git(dir, make([]byte, 8<<20), "hash-object", "-w", "--stdin")
	md := s.blob(dir, doc("p"))
	inner := s.mktree(dir, "100644 blob "+md+"\tPLUGIN.md", "100644 blob "+zeros+"\tzeros.bin")
	s.commitTree(dir, "zeros", s.mktree(dir, "040000 tree "+inner+"\tp"))
	for _, o := range []GitOptions{{Base: s.Base()}, {Base: s.Base(), NoFilter: true}} {
		res, err := FetchGit(context.Background(), mustLink(t, "https://github.com/evil/bomb/tree/zeros/p"), o)
		require.Error(t, err)
		assert.Nil(t, res)
		assert.ErrorIs(t, err, ErrLimit)
	}

	// 100k files in one folder: the tree object written directly (the
	// porcelain and fast-import are slow at this size).
	one, err := hex.DecodeString(s.blob(dir, "x"))
	require.NoError(t, err)
	mdRaw, err := hex.DecodeString(md)
	require.NoError(t, err)
	var b bytes.Buffer
	b.WriteString("100644 PLUGIN.md\x00")
	b.Write(mdRaw)
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&b, "100644 f%06d\x00", i)
		b.Write(one)
	}
	big := s.git(dir, b.Bytes(), "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
	s.commitTree(dir, "many", s.mktree(dir, "040000 tree "+big+"\tp"))
	res, err := FetchGit(context.Background(), mustLink(t, "https://github.com/evil/bomb/tree/many/p"), GitOptions{Base: s.Base()})
	require.Error(t, err)
	assert.Nil(t, res)
	assert.ErrorIs(t, err, ErrLimit)
	assert.Contains(t, err.Error(), "100001 entries")
}

// TestFetchGitWireLimit: the bytes read from the network are bounded.
func TestFetchGitWireLimit(t *testing.T) {
	t.Parallel()
	s := newGitServer(t)
	dir := s.repo("evil/wire", false)
	random := make([]byte, 600000)
	_, _ = rand.Read(random)
	s.commit(dir, "main", map[string]string{"p/PLUGIN.md": doc("p"), "elsewhere.bin": string(random)})
	_, err := FetchGit(context.Background(), mustLink(t, "https://github.com/evil/wire/tree/main/p"), GitOptions{Base: s.Base(), Limits: Limits{MaxWireBytes: 200000}})
	assert.ErrorIs(t, err, ErrLimit)
	assert.ErrorContains(t, err, "more than 200000 bytes")
}

// TestFetchGitDeadline: a server that never answers meets the deadline.
func TestFetchGitDeadline(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	_, err := FetchGit(context.Background(), mustLink(t, "https://github.com/a/b/tree/main/p"), GitOptions{Base: srv.URL, Limits: Limits{Deadline: 300 * time.Millisecond}})
	assert.ErrorIs(t, err, ErrLimit)
	assert.ErrorContains(t, err, "took longer than 300ms")
}

// TestFetchGitRedirectOut: a git server may not send the client to another
// origin.
func TestFetchGitRedirectOut(t *testing.T) {
	t.Parallel()
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	defer srv.Close()
	_, err := FetchGit(context.Background(), mustLink(t, "https://github.com/a/b/tree/main/p"), GitOptions{Base: srv.URL})
	assert.ErrorIs(t, err, ErrRedirect)
	assert.Zero(t, reached.Load())
}
