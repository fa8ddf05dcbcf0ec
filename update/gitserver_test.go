package update

import (
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/pkuinfo/harness/internal/gittest"
)

// gitServer is the shared real git smart-HTTP server (internal/gittest)
// with the names these tests use: it counts ref listings and object
// fetches, and can be told to fail or to hang.
type gitServer struct {
	*gittest.Server
	srv      *httptest.Server
	root     string
	env      []string
	listings *atomic.Int64
	fetches  *atomic.Int64
	fail     *atomic.Int32
	hang     *atomic.Int32
}

func newGitServer(t testing.TB) *gitServer {
	t.Helper()
	s := gittest.New(t)
	return &gitServer{Server: s, srv: s.Srv, root: s.Root, env: s.Env,
		listings: &s.Listings, fetches: &s.Fetches, fail: &s.Fail, hang: &s.Hang}
}

// repo makes an empty bare repository that answers partial fetches.
func (s *gitServer) repo(name string) string { s.T.Helper(); return s.Repo(name, true) }

// commit replaces the whole tree of branch with files and returns the commit.
func (s *gitServer) commit(dir, branch string, files map[string]string) string {
	s.T.Helper()
	return s.Commit(dir, branch, files)
}

// link is the GitHub link of a folder in a repository of this server.
func link(repo, ref, folder string) string {
	return "https://github.com/" + repo + "/tree/" + ref + "/" + folder
}
