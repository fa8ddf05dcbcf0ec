package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const installDoc = "---\nid: %s\nname: 测试\ndescription: A test document.\nversion: %s\n---\nInstructions.\n"

func listJSON(t *testing.T, env map[string]string) []map[string]any {
	t.Helper()
	code, out, errs := runCLI(t, env, "list", "--json")
	require.Equal(t, 0, code, errs)
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	return got
}

func TestInstallLocalListRemove(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home, "HARNESS_NOW": "2026-03-01T08:00:00Z"}
	dir := writeDoc(t, t.TempDir(), map[string]string{"PLUGIN.md": fmt.Sprintf(installDoc, "demo", "1.0.0")})

	// Without --yes and without a terminal: nothing stored.
	code, _, errs := runCLI(t, env, "install", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "confirm with --yes")
	assert.Empty(t, listJSON(t, env))

	code, out, errs := runCLI(t, env, "install", dir, "--yes")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "demo 1.0.0")
	assert.Contains(t, out, "installed demo 1.0.0 (community, h1:")
	got := listJSON(t, env)
	require.Len(t, got, 1)
	assert.Equal(t, "demo", got[0]["id"])
	assert.Equal(t, "local", got[0]["kind"])
	assert.Equal(t, "community", got[0]["trust"])
	assert.Equal(t, "2026-03-01T08:00:00Z", got[0]["installed"])
	assert.Equal(t, true, got[0]["enabled"])
	abs, _ := filepath.Abs(dir)
	assert.Equal(t, abs, got[0]["link"])

	code, out, _ = runCLI(t, env, "install", dir, "--yes")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "already installed")

	code, out, _ = runCLI(t, env, "list")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "demo")
	assert.Contains(t, out, "community")

	// The same id from another link: refused unless --replace.
	dir2 := writeDoc(t, t.TempDir(), map[string]string{"PLUGIN.md": fmt.Sprintf(installDoc, "demo", "2.0.0")})
	code, _, errs = runCLI(t, env, "install", dir2, "--yes")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "already installed from")
	assert.Contains(t, errs, "--replace")
	code, _, errs = runCLI(t, env, "install", dir2, "--yes", "--replace")
	require.Equal(t, 0, code, errs)
	got = listJSON(t, env)
	assert.Equal(t, "2.0.0", got[0]["version"])

	// Tampered files are quarantined and shown.
	h := got[0]["hash"].(string)
	stored := filepath.Join(home, "store", strings.NewReplacer("/", "_", "+", "-", ":", "-", "=", "").Replace(h), "PLUGIN.md")
	require.NoError(t, os.WriteFile(stored, []byte("changed"), 0o644))
	code, out, _ = runCLI(t, env, "list")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "demo is quarantined")

	code, out, _ = runCLI(t, env, "remove", "demo")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "removed demo")
	code, _, errs = runCLI(t, env, "remove", "demo")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "not installed")
	assert.Empty(t, listJSON(t, env))
}

func TestInstallInvalidStoresNothing(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home}
	dir := writeDoc(t, t.TempDir(), map[string]string{"PLUGIN.md": "---\nid: Bad Id\n---\n"})
	code, _, errs := runCLI(t, env, "install", dir, "--yes")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "nothing installed")
	assert.NoFileExists(t, filepath.Join(home, "state.json"))
	entries, _ := os.ReadDir(filepath.Join(home, "store"))
	assert.Empty(t, entries)

	code, _, errs = runCLI(t, env, "install", "https://github.com.evil/a/b/tree/main/x", "--yes")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "is not github.com")
}

func TestInstallURL(t *testing.T) {
	body := fmt.Sprintf(installDoc, "web-doc", "1.2.0")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/docs/PLUGIN.md" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	env := map[string]string{"HARNESS_HOME": t.TempDir()}
	code, _, errs := runCLI(t, env, "install", srv.URL+"/docs/PLUGIN.md", "--yes")
	require.Equal(t, 0, code, errs)
	got := listJSON(t, env)
	require.Len(t, got, 1)
	assert.Equal(t, "url", got[0]["kind"])
	assert.Equal(t, `"v1"`, got[0]["etag"])
	assert.Equal(t, "Thu, 01 Jan 2026 00:00:00 GMT", got[0]["lastModified"])
}

// gitRepoServer serves one bare repository (OWNER/REPO) over git http-backend.
func gitRepoServer(t *testing.T, repo string, files map[string]string) (base, commit string) {
	t.Helper()
	gitExe, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	bare := filepath.Join(root, filepath.FromSlash(repo)+".git")
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
	git := func(stdin string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = root, env, strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	git("", "init", "-q", "--bare", "-b", "main", bare)
	git("", "-C", bare, "config", "uploadpack.allowFilter", "true")
	git("", "-C", bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
	var b bytes.Buffer
	b.WriteString("commit refs/heads/main\ncommitter t <t@example.com> 1767225600 +0000\ndata 1\nx\n")
	for p, v := range files {
		if target, ok := strings.CutPrefix(v, "symlink:"); ok {
			fmt.Fprintf(&b, "M 120000 inline %s\ndata %d\n%s\n", p, len(target), target)
			continue
		}
		fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", p, len(v), v)
	}
	git(b.String(), "-C", bare, "fast-import", "--quiet")
	commit = git("", "-C", bare, "rev-parse", "main")
	h := &cgi.Handler{Path: gitExe, Args: []string{"http-backend"}, Stderr: io.Discard,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, commit
}

func TestInstallGitHub(t *testing.T) {
	base, commit := gitRepoServer(t, "acme/plugins", map[string]string{
		"good/PLUGIN.md": fmt.Sprintf(installDoc, "good", "1.0.0"),
		"evil/PLUGIN.md": fmt.Sprintf(installDoc, "evil", "1.0.0"),
		"evil/link":      "symlink:../../../etc/passwd",
	})
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home, "HARNESS_GIT_BASE": base}
	code, out, errs := runCLI(t, env, "install", "https://github.com/acme/plugins/tree/main/good", "--yes")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "installed good 1.0.0")
	got := listJSON(t, env)
	require.Len(t, got, 1)
	assert.Equal(t, commit, got[0]["commit"])
	assert.Equal(t, "refs/heads/main", got[0]["ref"])
	assert.Equal(t, "good", got[0]["path"])
	assert.Equal(t, "github", got[0]["kind"])
	assert.Equal(t, "https://github.com/acme/plugins/tree/main/good", got[0]["link"])

	code, _, errs = runCLI(t, env, "install", "https://github.com/acme/plugins/tree/main/evil", "--yes")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "symbolic link")
	assert.Len(t, listJSON(t, env), 1, "nothing more stored")
	entries, _ := os.ReadDir(filepath.Join(home, "store"))
	assert.Len(t, entries, 1)
}

func TestConfirm(t *testing.T) {
	for in, want := range map[string]bool{"y\n": true, "YES\n": true, " y \n": true, "n\n": false, "\n": false, "": false, "yes please\n": false} {
		var out bytes.Buffer
		got, err := confirm(strings.NewReader(in), &out, "Install? [y/N] ")
		require.NoError(t, err)
		assert.Equal(t, want, got, "%q", in)
		assert.Equal(t, "Install? [y/N] ", out.String())
	}
}

func TestInstallOfficial(t *testing.T) {
	base, _ := gitRepoServer(t, "pkuinfo/pku-harness-plugins", map[string]string{
		"canteen/PLUGIN.md": fmt.Sprintf(installDoc, "canteen", "1.0.0"),
	})
	env := map[string]string{"HARNESS_HOME": t.TempDir(), "HARNESS_GIT_BASE": base}
	code, out, errs := runCLI(t, env, "install", "https://github.com/pkuinfo/pku-harness-plugins/blob/main/canteen/PLUGIN.md", "--yes")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "installed canteen 1.0.0 (official")
	got := listJSON(t, env)
	require.Len(t, got, 1)
	assert.Equal(t, "official", got[0]["trust"])
}
