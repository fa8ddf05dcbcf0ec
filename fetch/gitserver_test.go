package fetch

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/pkuinfo/harness/internal/gittest"
)

// gitServer is the shared real git smart-HTTP server (internal/gittest)
// with the names these tests use.
type gitServer struct {
	*gittest.Server
	srv  *httptest.Server
	root string
	env  []string
}

func wrapGitServer(s *gittest.Server) *gitServer {
	return &gitServer{Server: s, srv: s.Srv, root: s.Root, env: s.Env}
}

func newGitServer(t testing.TB) *gitServer { t.Helper(); return wrapGitServer(gittest.New(t)) }

// newGitServerAt serves the repositories under root; the caller closes s.srv.
func newGitServerAt(t testing.TB, root string) *gitServer {
	t.Helper()
	return wrapGitServer(gittest.NewAt(t, root))
}

func (s *gitServer) git(dir string, stdin []byte, args ...string) string {
	s.T.Helper()
	return s.Git(dir, stdin, args...)
}

func (s *gitServer) repo(name string, filter bool) string { s.T.Helper(); return s.Repo(name, filter) }

func (s *gitServer) commit(dir, branch string, files map[string]string) string {
	s.T.Helper()
	return s.Commit(dir, branch, files)
}

func (s *gitServer) mktree(dir string, lines ...string) string {
	s.T.Helper()
	return s.Mktree(dir, lines...)
}

func (s *gitServer) blob(dir, content string) string { s.T.Helper(); return s.Blob(dir, content) }

func (s *gitServer) commitTree(dir, branch, tree string) string {
	s.T.Helper()
	return s.CommitTree(dir, branch, tree)
}

const pluginMD = "---\nid: %s\nname: %s\nversion: 1.0.0\n---\nInstructions.\n"

func doc(id string) string { return fmt.Sprintf(pluginMD, id, id) }
