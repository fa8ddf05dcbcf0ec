package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// harness dev listens on loopback only, and takes --campus or --secrets,
// not both.
func TestDevRefusesNonLoopbackAndBadFlags(t *testing.T) {
	env := map[string]string{"HARNESS_HOME": t.TempDir()}
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", ":0", "example.com:0"} {
		code, _, stderr := runCLI(t, env, "dev", "../../plugins-official/canteen", "--addr", addr)
		assert.Equal(t, ExitUsage, code, addr)
		assert.Contains(t, stderr, "--addr", addr)
	}
	code, _, stderr := runCLI(t, env, "dev", "../../plugins-official/canteen", "--campus", "--secrets", "x.yaml")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "--campus")
	code, _, _ = runCLI(t, env, "dev", "no/such/document")
	assert.Equal(t, ExitUsage, code)
}

// harness dev prints the page's address (with its token) on stdout, serves
// the document against the simulated campus, and stops when its context
// ends.
func TestDevServesUntilStopped(t *testing.T) {
	pr, pw := io.Pipe()
	app := &App{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard, Getenv: func(k string) string {
		if k == "HARNESS_HOME" {
			return t.TempDir()
		}
		return ""
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serveDev(ctx, app, "../../plugins-official/canteen", &devFlags{addr: "127.0.0.1:0", trust: "community", hostFlags: hostFlags{campus: true}})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go io.Copy(io.Discard, pr)
	i := strings.Index(line, "http://127.0.0.1:")
	require.GreaterOrEqual(t, i, 0, line)
	url := strings.TrimSpace(line[i:])
	resp, err := http.Post(url+"api/run", "application/json", strings.NewReader(`{"tool":"crowd","input":{"limit":1}}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	assert.Contains(t, string(b), `"canteens":[{`)
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("harness dev did not stop")
	}
}

// With --secrets, no answer of the page holds the file's credential, though
// the service echoes the session it was sent in its body and a header:
// through openHost, the proxy and the page's own last redaction.
func TestDevNeverShowsTheSecretsFilesCredential(t *testing.T) {
	const secret = "c0ffee5e551on-7f3a9b2d4e6c8a1b"
	card := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("JSESSIONID")
		if err != nil {
			http.Redirect(w, r, "/iaaa/login", http.StatusFound)
			return
		}
		w.Header().Set("X-Echo", c.Value)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"balance": 12, "echo": %q}`, c.Value)
	}))
	defer card.Close()
	dir := t.TempDir()
	doc := writeDoc(t, filepath.Join(dir, "doc"), map[string]string{
		"PLUGIN.md":      "---\nid: echo-dev\nname: E\ndescription: d\nversion: 1.0.0\nrequires: [campus-session]\naccess:\n  campus: [card]\n---\nI.\n",
		"tools/bal.yaml": "description: d\neffect: read\nsteps:\n  - request: {service: card, path: /api/bal}\n  - return: '{balance: .body.balance, echo: .body.echo, header: .headers[\"x-echo\"]}'\n",
	})
	services := filepath.Join(dir, "services.yaml")
	require.NoError(t, os.WriteFile(services, []byte("card:\n  origin: "+card.URL+"\n  auth:\n    cookies: [JSESSIONID]\n  login:\n    redirect: /iaaa/login\n"), 0o644))
	secrets := filepath.Join(dir, "secrets.yaml")
	require.NoError(t, os.WriteFile(secrets, []byte("card:\n  cookies: {JSESSIONID: \""+secret+"\"}\n"), 0o600))
	// the author keeps a copy inside the document's folder too
	require.NoError(t, os.WriteFile(filepath.Join(doc, "secrets.yaml"), []byte("card:\n  cookies: {JSESSIONID: \""+secret+"\"}\n"), 0o600))

	pr, pw := io.Pipe()
	app := &App{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard, Getenv: func(k string) string {
		if k == "HARNESS_HOME" {
			return filepath.Join(dir, "home")
		}
		return ""
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serveDev(ctx, app, doc, &devFlags{addr: "127.0.0.1:0", trust: "community", hostFlags: hostFlags{services: services, secrets: secrets}})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go io.Copy(io.Discard, pr)
	url := strings.TrimSpace(line[strings.Index(line, "http://"):])
	get := func(method, path, body string) string {
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s %s", path, b)
		return string(b)
	}
	run := get("POST", "api/run", `{"tool":"bal","input":{}}`)
	assert.Contains(t, run, `"balance":12`)
	assert.Contains(t, run, `[redacted]`, "the echo is there, redacted")
	for path, text := range map[string]string{
		"run":   run,
		"state": get("GET", "api/state", ""),
		"file":  get("GET", "api/file?name=secrets.yaml", ""),
		"tests": get("POST", "api/tests", `{}`),
	} {
		assert.NotContains(t, text, secret, path)
		assert.NotContains(t, text, secret[:12], path)
	}
	cancel()
	assert.NoError(t, <-done)
}
