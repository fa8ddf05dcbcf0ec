package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustLink(t testing.TB, s string) *Link {
	t.Helper()
	l, err := ParseLink(s)
	require.NoError(t, err)
	return l
}

func TestFetchGitBranchFolder(t *testing.T) {
	t.Parallel()
	for _, filter := range []bool{true, false} {
		t.Run(map[bool]string{true: "partial", false: "depth1"}[filter], func(t *testing.T) {
			s := newGitServer(t)
			dir := s.repo("acme/plugins", filter)
			c := s.commit(dir, "main", map[string]string{
				"README.md":                "top",
				"canteen/PLUGIN.md":        doc("canteen"),
				"canteen/tools/crowd.yaml": "title: x\n",
				"canteen/.hidden":          "not counted",
				"other/PLUGIN.md":          doc("other"),
				"big/blob.bin":             string(make([]byte, 300000)),
			})
			res, err := FetchGit(context.Background(), mustLink(t, "https://github.com/acme/plugins/tree/main/canteen"), GitOptions{Base: s.Base()})
			require.NoError(t, err)
			assert.Equal(t, c, res.Commit)
			assert.Equal(t, "refs/heads/main", res.Ref)
			assert.Equal(t, "canteen", res.Path)
			assert.Equal(t, filter, res.Stats.Partial)
			assert.Equal(t, map[string][]byte{"PLUGIN.md": []byte(doc("canteen")), "tools/crowd.yaml": []byte("title: x\n")}, res.Files)
			t.Logf("requests %d, wire bytes %d", res.Stats.Requests, res.Stats.WireBytes)
		})
	}
}

func TestFetchGitRefs(t *testing.T) {
	t.Parallel()
	for _, filter := range []bool{true, false} {
		t.Run(map[bool]string{true: "partial", false: "depth1"}[filter], func(t *testing.T) {
			s := newGitServer(t)
			dir := s.repo("acme/multi", filter)
			c1 := s.commit(dir, "main", map[string]string{
				"PLUGIN.md":            doc("root"),
				"plugins/a/PLUGIN.md":  doc("a1"),
				"plugins/b/PLUGIN.md":  doc("b1"),
				"plugins/b/tools/x.md": "x",
			})
			s.git(dir, nil, "tag", "-a", "v1.0", "-m", "release", c1)
			s.git(dir, nil, "tag", "light", c1)
			c2 := s.commit(dir, "main", map[string]string{
				"PLUGIN.md":           doc("root"),
				"plugins/a/PLUGIN.md": doc("a2"),
				"plugins/b/PLUGIN.md": doc("b2"),
			})
			// A branch whose name has slashes, and a shorter tag that is a
			// prefix of it: the longest name wins.
			c3 := s.commit(dir, "feature/new/ui", map[string]string{"plugins/a/PLUGIN.md": doc("a3")})
			decoy := s.commit(dir, "decoy", map[string]string{"ui/plugins/a/PLUGIN.md": doc("decoy")})
			s.git(dir, nil, "tag", "feature/new", decoy)
			// A commit no ref reaches any more.
			gone := s.commit(dir, "gone", map[string]string{"plugins/a/PLUGIN.md": doc("gone")})
			s.git(dir, nil, "update-ref", "-d", "refs/heads/gone")

			cases := []struct {
				link, commit, ref, path, id string
			}{
				{"https://github.com/acme/multi/tree/main/plugins/a", c2, "refs/heads/main", "plugins/a", "a2"},
				{"https://github.com/acme/multi/tree/main/plugins/b", c2, "refs/heads/main", "plugins/b", "b2"},
				{"https://github.com/acme/multi/blob/main/plugins/b/PLUGIN.md", c2, "refs/heads/main", "plugins/b", "b2"},
				{"https://github.com/acme/multi", c2, "HEAD", "", "root"},
				{"https://github.com/acme/multi/tree/main", c2, "refs/heads/main", "", "root"},
				{"https://github.com/acme/multi/tree/v1.0/plugins/a", c1, "refs/tags/v1.0", "plugins/a", "a1"},
				{"https://github.com/acme/multi/tree/light/plugins/b", c1, "refs/tags/light", "plugins/b", "b1"},
				{"https://github.com/acme/multi/tree/feature/new/ui/plugins/a", c3, "refs/heads/feature/new/ui", "plugins/a", "a3"},
				{"https://github.com/acme/multi/tree/" + c1 + "/plugins/a", c1, "", "plugins/a", "a1"},
			}
			for i, c := range cases {
				if !filter && i%3 != 0 && c.ref != "" {
					continue // the fallback: a sample of the ref kinds
				}
				res, err := FetchGit(context.Background(), mustLink(t, c.link), GitOptions{Base: s.Base()})
				require.NoError(t, err, c.link)
				assert.Equal(t, c.commit, res.Commit, c.link)
				assert.Equal(t, c.ref, res.Ref, c.link)
				assert.Equal(t, c.path, res.Path, c.link)
				assert.Equal(t, doc(c.id), string(res.Files["PLUGIN.md"]), c.link)
			}
			res, err := FetchGit(context.Background(), mustLink(t, "https://github.com/acme/multi/tree/main/plugins/b"), GitOptions{Base: s.Base()})
			require.NoError(t, err)
			assert.Len(t, res.Files, 1)

			_, err = FetchGit(context.Background(), mustLink(t, "https://github.com/acme/multi/tree/"+gone+"/plugins/a"), GitOptions{Base: s.Base()})
			assert.ErrorIs(t, err, ErrRefused)
			assert.ErrorContains(t, err, "not reachable from any branch or tag")

			_, err = FetchGit(context.Background(), mustLink(t, "https://github.com/acme/multi/tree/nosuch/plugins/a"), GitOptions{Base: s.Base()})
			assert.ErrorContains(t, err, "no branch or tag matches")
			_, err = FetchGit(context.Background(), mustLink(t, "https://github.com/acme/multi/tree/main/plugins/zz"), GitOptions{Base: s.Base()})
			assert.ErrorContains(t, err, `no folder "plugins/zz"`)
			_, err = FetchGit(context.Background(), mustLink(t, "https://github.com/acme/multi/tree/main/plugins"), GitOptions{Base: s.Base()})
			assert.ErrorContains(t, err, "no PLUGIN.md in plugins")
			_, err = FetchGit(context.Background(), mustLink(t, "https://github.com/acme/nothere/tree/main/x"), GitOptions{Base: s.Base()})
			assert.ErrorContains(t, err, "no such repository")
		})
	}
}

func TestListRefs(t *testing.T) {
	s := newGitServer(t)
	dir := s.repo("acme/r", true)
	c := s.commit(dir, "main", map[string]string{"PLUGIN.md": doc("x")})
	s.git(dir, nil, "tag", "-a", "v1", "-m", "m", c)
	url := s.Base() + "/acme/r.git"
	refs, err := ListRefs(context.Background(), url, nil)
	require.NoError(t, err)
	assert.Equal(t, c, refs["refs/heads/main"].String())
	assert.Equal(t, c, refs["refs/tags/v1"].String(), "annotated tags are peeled")
	assert.Equal(t, c, refs["HEAD"].String())
}

func TestResolveRef(t *testing.T) {
	h := func(c byte) plumbing.Hash { var x plumbing.Hash; x[0] = c; return x }
	refs := map[string]plumbing.Hash{
		"HEAD": h(1), "refs/heads/main": h(1), "refs/heads/a": h(2), "refs/heads/a/b": h(3),
		"refs/tags/a/b": h(4), "refs/tags/v1": h(5),
	}
	for in, want := range map[string]Resolved{
		"":         {Ref: "HEAD", Commit: h(1)},
		"main":     {Ref: "refs/heads/main", Commit: h(1)},
		"main/x/y": {Ref: "refs/heads/main", Commit: h(1), Path: "x/y"},
		"a/c":      {Ref: "refs/heads/a", Commit: h(2), Path: "c"},
		"a/b/c":    {Ref: "refs/heads/a/b", Commit: h(3), Path: "c"},
		"a/b":      {Ref: "refs/heads/a/b", Commit: h(3)},
		"v1/p":     {Ref: "refs/tags/v1", Commit: h(5), Path: "p"},
		"0123456789abcdef0123456789abcdef01234567/p": {Commit: plumbing.NewHash("0123456789abcdef0123456789abcdef01234567"), Path: "p"},
	} {
		got, err := ResolveRef(refs, in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := ResolveRef(refs, "mainx/p")
	assert.ErrorContains(t, err, "no branch or tag matches")
	_, err = ResolveRef(refs, "0123456/p")
	assert.ErrorContains(t, err, "full 40-hex commit id")
}

func TestFetchKinds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "PLUGIN.md"), []byte(doc("loc")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".hidden"), []byte("x"), 0o644))
	d, err := Fetch(context.Background(), mustLink(t, dir), Options{})
	require.NoError(t, err)
	assert.Equal(t, TrustCommunity, d.Trust)
	assert.Equal(t, map[string][]byte{"PLUGIN.md": []byte(doc("loc"))}, map[string][]byte(d.Files))

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"e1"`)
		_, _ = w.Write([]byte(doc("web")))
	}))
	defer srv.Close()
	d, err = Fetch(context.Background(), mustLink(t, srv.URL+"/PLUGIN.md"), Options{})
	require.NoError(t, err)
	assert.Equal(t, `"e1"`, d.ETag)
	assert.Equal(t, doc("web"), string(d.Files["PLUGIN.md"]))
}

// TestFetchGitPartialRefused: a server that advertises partial fetches but
// fails them gets the depth-1 fetch instead.
func TestFetchGitPartialRefused(t *testing.T) {
	t.Parallel()
	s := newGitServer(t)
	dir := s.repo("acme/flaky", true)
	c := s.commit(dir, "main", map[string]string{"p/PLUGIN.md": doc("p")})
	for _, failAt := range []int64{1, 2} { // the trees fetch, the blobs fetch
		inner := s.srv.Config.Handler
		var posts atomic.Int64
		s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && posts.Add(1) == failAt {
				http.Error(w, "no", http.StatusInternalServerError)
				return
			}
			inner.ServeHTTP(w, r)
		})
		res, err := FetchGit(context.Background(), mustLink(t, "https://github.com/acme/flaky/tree/main/p"), GitOptions{Base: s.Base()})
		s.srv.Config.Handler = inner
		require.NoError(t, err, "fail at %d", failAt)
		assert.Equal(t, c, res.Commit)
		assert.False(t, res.Stats.Partial)
		assert.Equal(t, doc("p"), string(res.Files["PLUGIN.md"]))
	}
}
