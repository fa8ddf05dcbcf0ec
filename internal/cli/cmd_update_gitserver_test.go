package cli

import (
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/pkuinfo/harness/internal/gittest"
)

// updGitServer is the shared real git smart-HTTP server (internal/gittest)
// for the update tests: it counts ref listings and object fetches and can
// be told to fail.
type updGitServer struct {
	*gittest.Server
	srv      *httptest.Server
	listings *atomic.Int64
	fetches  *atomic.Int64
	fail     *atomic.Int32
}

func newUpdGitServer(t testing.TB) *updGitServer {
	t.Helper()
	s := gittest.New(t)
	return &updGitServer{Server: s, srv: s.Srv, listings: &s.Listings, fetches: &s.Fetches, fail: &s.Fail}
}

func (s *updGitServer) repo(name string) string { s.T.Helper(); return s.Repo(name, true) }

// commit replaces the tree of main with files and returns the commit.
func (s *updGitServer) commit(dir string, files map[string]string) string {
	s.T.Helper()
	return s.Commit(dir, "main", files)
}

func (s *updGitServer) reset() { s.Reset() }
