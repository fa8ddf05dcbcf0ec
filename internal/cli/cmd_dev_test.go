package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
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
