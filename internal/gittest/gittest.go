// Package gittest is a real git smart-HTTP server for tests: git
// http-backend behind net/http/cgi on a loopback httptest server, serving
// bare repositories the test builds with the git command. It counts ref
// listings and object fetches and can be told to fail or to hang, so the
// fetch, review and command-line tests share one server instead of three
// copies.
package gittest

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Server serves the bare repositories under Root as /OWNER/REPO.git.
type Server struct {
	T    testing.TB
	Root string
	Srv  *httptest.Server
	Env  []string // the environment of the git commands the test runs

	Requests atomic.Int64 // every request
	Listings atomic.Int64 // GET …/info/refs
	Fetches  atomic.Int64 // the rest (upload-pack)
	Fail     atomic.Int32 // answer 500 while set
	Hang     atomic.Int32 // never answer while set (until the client gives up)

	stamp     atomic.Int64
	done      chan struct{}
	closeOnce sync.Once
}

// New serves repositories in a temporary folder; the server closes with the test.
func New(t testing.TB) *Server {
	t.Helper()
	s := NewAt(t, t.TempDir())
	t.Cleanup(s.Close)
	return s
}

// NewAt serves the repositories under root; the caller calls Close. Without
// git on the machine the test is skipped.
func NewAt(t testing.TB, root string) *Server {
	t.Helper()
	gitExe, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	s := &Server{T: t, Root: root, done: make(chan struct{})}
	s.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "XDG_CONFIG_HOME="+root,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
	)
	h := &cgi.Handler{
		Path:   gitExe,
		Args:   []string{"http-backend"},
		Stderr: io.Discard,
		Env:    []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root},
	}
	s.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		if strings.HasSuffix(r.URL.Path, "/info/refs") {
			s.Listings.Add(1)
		} else {
			s.Fetches.Add(1)
		}
		if s.Hang.Load() != 0 {
			select {
			case <-r.Context().Done():
			case <-s.done:
			}
			return
		}
		if s.Fail.Load() != 0 {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	}))
	return s
}

// Close releases hanging requests and stops the server.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.Srv.Close()
	})
}

// Base is the HARNESS_GIT_BASE for this server.
func (s *Server) Base() string { return s.Srv.URL }

// Reset zeroes the listing and fetch counters.
func (s *Server) Reset() { s.Listings.Store(0); s.Fetches.Store(0) }

// Git runs a git command in dir and returns its trimmed output; a failure
// fails the test.
func (s *Server) Git(dir string, stdin []byte, args ...string) string {
	s.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = s.Env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		s.T.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// Repo makes an empty bare repository OWNER/REPO with branch main. filter
// lets the server answer partial (trees-only) fetches and wants of reachable
// objects, as GitHub does.
func (s *Server) Repo(name string, filter bool) string {
	s.T.Helper()
	dir := filepath.Join(s.Root, name+".git")
	s.Git(s.Root, nil, "init", "-q", "--bare", "-b", "main", dir)
	if filter {
		s.Git(dir, nil, "config", "uploadpack.allowFilter", "true")
		s.Git(dir, nil, "config", "uploadpack.allowReachableSHA1InWant", "true")
	}
	return dir
}

// Commit replaces the whole tree of branch with files and returns the new
// commit (each commit a second later than the last). A file value is plain
// content, or "symlink:TARGET", "gitlink:SHA" (a submodule entry) or
// "exec:CONTENT".
func (s *Server) Commit(dir, branch string, files map[string]string) string {
	s.T.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "commit refs/heads/%s\ncommitter t <t@example.com> %d +0000\ndata 6\nupdate\n", branch, 1767225600+s.stamp.Add(1))
	if s.HasRef(dir, "refs/heads/"+branch) {
		fmt.Fprintf(&b, "from refs/heads/%s^0\n", branch)
	}
	b.WriteString("deleteall\n")
	for _, p := range slices.Sorted(maps.Keys(files)) {
		v := files[p]
		switch {
		case strings.HasPrefix(v, "symlink:"):
			v = strings.TrimPrefix(v, "symlink:")
			fmt.Fprintf(&b, "M 120000 inline %s\ndata %d\n%s\n", p, len(v), v)
		case strings.HasPrefix(v, "gitlink:"):
			fmt.Fprintf(&b, "M 160000 %s %s\n", strings.TrimPrefix(v, "gitlink:"), p)
		case strings.HasPrefix(v, "exec:"):
			v = strings.TrimPrefix(v, "exec:")
			fmt.Fprintf(&b, "M 100755 inline %s\ndata %d\n%s\n", p, len(v), v)
		default:
			fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", p, len(v), v)
		}
	}
	s.Git(dir, b.Bytes(), "fast-import", "--quiet", "--force")
	return s.Git(dir, nil, "rev-parse", "refs/heads/"+branch)
}

// HasRef reports whether ref exists in the repository at dir.
func (s *Server) HasRef(dir, ref string) bool {
	cmd := exec.Command("git", "rev-parse", "--verify", "-q", ref)
	cmd.Dir = dir
	cmd.Env = s.Env
	return cmd.Run() == nil
}

// Mktree writes a tree from "MODE TYPE SHA\tNAME" lines, as git mktree
// reads them (it accepts names the porcelain refuses).
func (s *Server) Mktree(dir string, lines ...string) string {
	s.T.Helper()
	return s.Git(dir, []byte(strings.Join(lines, "\n")+"\n"), "mktree", "--missing")
}

// Blob writes a blob and returns its id.
func (s *Server) Blob(dir, content string) string {
	s.T.Helper()
	return s.Git(dir, []byte(content), "hash-object", "-w", "--stdin")
}

// CommitTree makes a commit of tree on branch (no parent) and returns it.
func (s *Server) CommitTree(dir, branch, tree string) string {
	s.T.Helper()
	c := s.Git(dir, nil, "commit-tree", tree, "-m", "crafted")
	s.Git(dir, nil, "update-ref", "refs/heads/"+branch, c)
	return c
}
