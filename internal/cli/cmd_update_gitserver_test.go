package cli

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

// updGitServer is a real git smart-HTTP server (git http-backend behind
// net/http/cgi) on loopback for the update tests. It counts ref listings and
// object fetches and can be told to fail.
type updGitServer struct {
	t        testing.TB
	root     string
	srv      *httptest.Server
	env      []string
	listings atomic.Int64
	fetches  atomic.Int64
	fail     atomic.Int32
	stamp    atomic.Int64
}

func newUpdGitServer(t testing.TB) *updGitServer {
	t.Helper()
	gitExe, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	s := &updGitServer{t: t, root: root}
	s.env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "XDG_CONFIG_HOME="+root)
	h := &cgi.Handler{
		Path:   gitExe,
		Args:   []string{"http-backend"},
		Stderr: io.Discard,
		Env:    []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/info/refs") {
			s.listings.Add(1)
		} else {
			s.fetches.Add(1)
		}
		if s.fail.Load() != 0 {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *updGitServer) git(dir string, stdin []byte, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, s.env
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

func (s *updGitServer) repo(name string) string {
	s.t.Helper()
	dir := filepath.Join(s.root, name+".git")
	s.git(s.root, nil, "init", "-q", "--bare", "-b", "main", dir)
	s.git(dir, nil, "config", "uploadpack.allowFilter", "true")
	s.git(dir, nil, "config", "uploadpack.allowReachableSHA1InWant", "true")
	return dir
}

// commit replaces the tree of main with files and returns the commit.
func (s *updGitServer) commit(dir string, files map[string]string) string {
	s.t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "commit refs/heads/main\ncommitter t <t@example.com> %d +0000\ndata 6\nupdate\n", 1767225600+s.stamp.Add(1))
	cmd := exec.Command("git", "rev-parse", "--verify", "-q", "refs/heads/main")
	cmd.Dir, cmd.Env = dir, s.env
	if cmd.Run() == nil {
		b.WriteString("from refs/heads/main^0\n")
	}
	b.WriteString("deleteall\n")
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", p, len(files[p]), files[p])
	}
	s.git(dir, b.Bytes(), "fast-import", "--quiet", "--force")
	return s.git(dir, nil, "rev-parse", "refs/heads/main")
}

func (s *updGitServer) reset() { s.listings.Store(0); s.fetches.Store(0) }
