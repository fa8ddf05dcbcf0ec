package review

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
	"time"
)

// gitServer is a real git smart-HTTP server (git http-backend behind
// net/http/cgi) on loopback, serving bare repositories under root as
// /OWNER/REPO.git. It counts ref listings and object fetches, and can be
// told to fail or to hang.
type gitServer struct {
	t        testing.TB
	root     string
	srv      *httptest.Server
	env      []string
	listings atomic.Int64 // GET …/info/refs
	fetches  atomic.Int64 // POST …/git-upload-pack
	fail     atomic.Int32 // answer 500 while set
	hang     atomic.Int32 // never answer while set
}

func newGitServer(t testing.TB) *gitServer {
	t.Helper()
	gitExe, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	s := &gitServer{t: t, root: root}
	s.env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "XDG_CONFIG_HOME="+root)
	h := &cgi.Handler{
		Path:   gitExe,
		Args:   []string{"http-backend"},
		Stderr: io.Discard,
		Env:    []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root},
	}
	done := make(chan struct{})
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/info/refs") {
			s.listings.Add(1)
		} else {
			s.fetches.Add(1)
		}
		if s.hang.Load() != 0 {
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		if s.fail.Load() != 0 {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { close(done); s.srv.Close() })
	return s
}

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

// repo makes an empty bare repository named OWNER/REPO.
func (s *gitServer) repo(name string) string {
	s.t.Helper()
	dir := filepath.Join(s.root, name+".git")
	s.git(s.root, nil, "init", "-q", "--bare", "-b", "main", dir)
	s.git(dir, nil, "config", "uploadpack.allowFilter", "true")
	s.git(dir, nil, "config", "uploadpack.allowReachableSHA1InWant", "true")
	return dir
}

var commitClock atomic.Int64

// commit replaces the whole tree of branch with files and returns the commit.
func (s *gitServer) commit(dir, branch string, files map[string]string) string {
	s.t.Helper()
	var b bytes.Buffer
	ts := 1767225600 + commitClock.Add(1)
	fmt.Fprintf(&b, "commit refs/heads/%s\ncommitter t <t@example.com> %d +0000\ndata 6\nupdate\n", branch, ts)
	cmd := exec.Command("git", "rev-parse", "--verify", "-q", "refs/heads/"+branch)
	cmd.Dir, cmd.Env = dir, s.env
	if cmd.Run() == nil {
		fmt.Fprintf(&b, "from refs/heads/%s^0\n", branch)
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
	return s.git(dir, nil, "rev-parse", "refs/heads/"+branch)
}

// link is the GitHub link of a folder in a repository of this server.
func link(repo, ref, folder string) string {
	return "https://github.com/" + repo + "/tree/" + ref + "/" + folder
}

var _ = time.Second
