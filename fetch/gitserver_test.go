package fetch

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

// gitServer is a real git smart-HTTP server (git http-backend behind
// net/http/cgi) on loopback, serving bare repositories under root as
// /OWNER/REPO.git.
type gitServer struct {
	t        testing.TB
	root     string
	srv      *httptest.Server
	requests atomic.Int64
	env      []string
}

func newGitServer(t testing.TB) *gitServer {
	t.Helper()
	s := newGitServerAt(t, t.TempDir())
	t.Cleanup(s.srv.Close)
	return s
}

// newGitServerAt serves the repositories under root; the caller closes
// s.srv.
func newGitServerAt(t testing.TB, root string) *gitServer {
	t.Helper()
	gitExe, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	s := &gitServer{t: t, root: root}
	s.env = append(os.Environ(),
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
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	return s
}

// Base is the HARNESS_GIT_BASE for this server.
func (s *gitServer) Base() string { return s.srv.URL }

func (s *gitServer) git(dir string, stdin []byte, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = s.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// repo makes an empty bare repository OWNER/REPO. filter lets the server
// answer partial (trees-only) fetches and wants of reachable objects, as
// GitHub does.
func (s *gitServer) repo(name string, filter bool) string {
	s.t.Helper()
	dir := filepath.Join(s.root, name+".git")
	s.git(s.root, nil, "init", "-q", "--bare", "-b", "main", dir)
	if filter {
		s.git(dir, nil, "config", "uploadpack.allowFilter", "true")
		s.git(dir, nil, "config", "uploadpack.allowReachableSHA1InWant", "true")
	}
	return dir
}

// A file value in commit: plain content, or "symlink:TARGET", or
// "gitlink:SHA" (a submodule entry), or "exec:CONTENT".
func (s *gitServer) commit(dir, branch string, files map[string]string) string {
	s.t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "commit refs/heads/%s\ncommitter t <t@example.com> 1767225600 +0000\ndata 6\nupdate\n", branch)
	if s.hasRef(dir, "refs/heads/"+branch) {
		fmt.Fprintf(&b, "from refs/heads/%s^0\n", branch)
	}
	b.WriteString("deleteall\n")
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
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
	s.git(dir, b.Bytes(), "fast-import", "--quiet", "--force")
	return s.git(dir, nil, "rev-parse", "refs/heads/"+branch)
}

func (s *gitServer) hasRef(dir, ref string) bool {
	cmd := exec.Command("git", "rev-parse", "--verify", "-q", ref)
	cmd.Dir = dir
	cmd.Env = s.env
	return cmd.Run() == nil
}

// mktree writes a tree from "MODE TYPE SHA\tNAME" lines, as git mktree
// reads them (it accepts names the porcelain refuses).
func (s *gitServer) mktree(dir string, lines ...string) string {
	s.t.Helper()
	return s.git(dir, []byte(strings.Join(lines, "\n")+"\n"), "mktree", "--missing")
}

// blob writes a blob and returns its id.
func (s *gitServer) blob(dir, content string) string {
	s.t.Helper()
	return s.git(dir, []byte(content), "hash-object", "-w", "--stdin")
}

// commitTree makes a commit of tree on branch (no parent) and returns it.
func (s *gitServer) commitTree(dir, branch, tree string) string {
	s.t.Helper()
	c := s.git(dir, nil, "commit-tree", tree, "-m", "crafted")
	s.git(dir, nil, "update-ref", "refs/heads/"+branch, c)
	return c
}

const pluginMD = "---\nid: %s\nname: %s\nversion: 1.0.0\n---\nInstructions.\n"

func doc(id string) string { return fmt.Sprintf(pluginMD, id, id) }
