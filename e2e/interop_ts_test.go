package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsSDK is the folder whose node_modules holds the official TypeScript MCP
// SDK (@modelcontextprotocol/sdk), which .ci/run installs from the npm
// registry: HARNESS_MCP_TS, else the cache folder .ci/run uses. Without it
// (and node) the interop tests skip, except under CI, where they fail.
func tsSDK(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HARNESS_MCP_TS")
	if dir == "" {
		if h, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(h, "harness-node")
		}
	}
	_, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	if nodeErr != nil || sdkErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install node and the TypeScript MCP SDK (.ci/run): node: %v; sdk in %s: %v", nodeErr, dir, sdkErr)
		}
		t.Skipf("node or the TypeScript MCP SDK is missing (run .ci/run once, or set HARNESS_MCP_TS): %v %v", nodeErr, sdkErr)
	}
	return dir
}

// nodeScript copies testdata/interop/NAME into a folder beside the SDK's
// node_modules and starts it with node; the process is killed at cleanup.
func nodeScript(t *testing.T, name string, env ...string) (io.WriteCloser, *bufio.Reader) {
	t.Helper()
	sdk := tsSDK(t)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(sdk, "node_modules"), filepath.Join(dir, "node_modules")))
	src, err := os.ReadFile(filepath.Join("testdata", "interop", name))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), src, 0o644))
	cmd := exec.Command("node", name)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = &testLog{t: t, prefix: name + ": "}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return in, bufio.NewReader(out)
}

// testLog passes a child's stderr to the test log.
type testLog struct {
	t      *testing.T
	prefix string
}

func (l *testLog) Write(p []byte) (int, error) {
	l.t.Logf("%s%s", l.prefix, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestInteropRemotePluginFromTheTypeScriptSDK adds a remote plugin served by
// a short server written with the official TypeScript SDK, and calls its
// tools through harness run and harness mcp; the token is never printed.
func TestInteropRemotePluginFromTheTypeScriptSDK(t *testing.T) {
	const token = "ts-token-5e1f0a9c7b3d2e4f6a8b"
	_, out := nodeScript(t, "remote-server.mjs", "TOKEN="+token)
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	url := strings.TrimSpace(line)
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)

	home := t.TempDir()
	tok := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tok, []byte(token+"\n"), 0o600))
	r := invocation{home: home, limit: time.Minute, args: []string{"add-remote", url, "--token-file", tok, "--yes"}}.run(t)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "mcp-ts-canteen.menu")
	assert.Contains(t, r.stdout, "mcp-ts-canteen.place_order")
	requireNoToken(t, token, r)

	r = invocation{home: home, limit: time.Minute, args: []string{"tools", "--json"}}.run(t)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "mcp-ts-canteen__menu")
	requireNoToken(t, token, r)

	r = invocation{home: home, limit: time.Minute, args: []string{"run", "mcp-ts-canteen", "menu", "--input", `{"day":"Friday"}`}}.run(t)
	require.Equal(t, 0, r.code, r.stderr)
	assert.JSONEq(t, `{"day":"Friday","dishes":["Beef noodles","Mapo tofu"]}`, r.stdout)
	r = invocation{home: home, limit: time.Minute, args: []string{"run", "mcp-ts-canteen", "place_order", "--actor", "agent", "--input", `{"dish":"Mapo tofu"}`}}.run(t)
	assert.Equal(t, 3, r.code, "a write asks: refused without --approve")
	requireNoToken(t, token, r)

	// harness mcp: the Go SDK's client calls the read tool; the write asks,
	// and without elicitation it is refused: the server records no order.
	m := startMCPBinary(t, home)
	ctx := context.Background()
	res, err := m.call(ctx, "mcp-ts-canteen__menu", map[string]any{"day": "Monday"})
	require.NoError(t, err)
	var env map[string]any
	require.NoError(t, json.Unmarshal([]byte(res), &env), res)
	assert.Equal(t, map[string]any{"day": "Monday", "dishes": []any{"Beef noodles", "Mapo tofu"}}, env["data"])
	assert.Equal(t, true, env["untrusted"])
	res, err = m.call(ctx, "mcp-ts-canteen__place_order", map[string]any{"dish": "Mapo tofu"})
	require.Error(t, err, res)
	m.close(t)
	assert.NotContains(t, m.output(), token)
	assert.Equal(t, "[]", orders(t, url))
}

func orders(t *testing.T, mcpURL string) string {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(mcpURL, "/mcp") + "/orders")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func requireNoToken(t *testing.T, token string, r result) {
	t.Helper()
	require.NotContains(t, r.stdout, token)
	require.NotContains(t, r.stderr, token)
}

// tsCheck is one line the TypeScript client prints.
type tsCheck map[string]any

// runTSClient runs mcp-client.mjs with env; at its "ready" line it calls
// between() and then lets it go on; it returns the checks by name.
func runTSClient(t *testing.T, between func(), env ...string) map[string]tsCheck {
	t.Helper()
	in, out := nodeScript(t, "mcp-client.mjs", env...)
	defer in.Close()
	checks := map[string]tsCheck{}
	for {
		line, err := out.ReadString('\n')
		if err != nil {
			break
		}
		var c tsCheck
		require.NoError(t, json.Unmarshal([]byte(line), &c), line)
		name, _ := c["check"].(string)
		require.NotEqual(t, "failed", name, line)
		checks[name] = c
		if name == "ready" {
			between()
			_, err := in.Write([]byte("go\n"))
			require.NoError(t, err)
		}
	}
	return checks
}

// helloDoc is a one-tool community document to install while a client is
// connected.
func helloDoc(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tools"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "PLUGIN.md"), []byte("---\nid: hello-interop\nname: Hello\ndescription: Says hello.\nversion: 1.0.0\n---\nUse hello-interop__hi to greet.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools", "hi.yaml"), []byte("title: Hi\ndescription: Greets.\neffect: read\ninput: {type: object}\nsteps:\n  - return: '\"hi\"'\n"), 0o644))
	return dir
}

// TestInteropTypeScriptClientOverStdio drives harness mcp --campus with a
// client written with the official TypeScript SDK: list, a read tool with
// the simulated campus's data, a write declined and then accepted through
// elicitation, tools/list_changed after an install by another process, and
// a malformed line answered with a JSON-RPC error while the session goes on.
func TestInteropTypeScriptClientOverStdio(t *testing.T) {
	home := t.TempDir()
	doc := helloDoc(t)
	checks := runTSClient(t, func() {
		r := invocation{home: home, limit: time.Minute, args: []string{"install", doc, "--yes"}}.run(t)
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
	}, "MODE=stdio", "HARNESS_BIN="+bin, "HARNESS_HOME="+home)
	interopAssertions(t, checks)
	mal := checks["malformed"]
	require.NotNil(t, mal, "the malformed-line check ran")
	answers := mal["answers"].([]any)
	require.Len(t, answers, 2, "both lines answered before exit")
	assert.Equal(t, map[string]any{"id": nil, "code": -32700.0, "ok": false}, answers[0])
	assert.Equal(t, map[string]any{"id": 7.0, "code": nil, "ok": true}, answers[1])
}

func interopAssertions(t *testing.T, checks map[string]tsCheck) {
	t.Helper()
	assert.Equal(t, true, checks["initialize"]["listChanged"])
	list := checks["list"]
	require.NotNil(t, list)
	book, _ := list["book"].(map[string]any)
	cancel, _ := list["cancel"].(map[string]any)
	balance, _ := list["balance"].(map[string]any)
	assert.Equal(t, false, book["destructiveHint"], "a booking adds: not destructive")
	assert.Equal(t, true, cancel["destructiveHint"], "a cancellation is")
	assert.Equal(t, true, balance["readOnlyHint"])
	assert.Equal(t, true, balance["openWorldHint"], "it reaches the campus")
	require.NotNil(t, checks["read"])
	read := checks["read"]
	assert.Equal(t, map[string]any{"plugin": "wallet", "tool": "cardBalance", "trust": "official"}, read["source"])
	data, _ := read["data"].(map[string]any)
	require.NotNil(t, data, "simulated-campus data")
	assert.Contains(t, data, "balanceYuan")
	meta, _ := read["meta"].(map[string]any)
	assert.Equal(t, false, meta["pku-harness/untrusted"], "an official read is not untrusted, in _meta too")
	dec, acc := checks["write-declined"], checks["write-accepted"]
	assert.Equal(t, true, dec["isError"], dec["text"])
	assert.Contains(t, dec["text"], "declined")
	assert.Equal(t, false, acc["isError"], acc["text"])
	assert.Equal(t, 2.0, acc["asked"], "the user was asked twice")
	lc := checks["list-changed"]
	assert.GreaterOrEqual(t, lc["notified"], 1.0)
	assert.Equal(t, []any{"hello-interop__hi"}, lc["tools"])
}

// TestInteropTypeScriptClientOverHTTP drives harness mcp --http --campus,
// behind a bearer token, with the same TypeScript client.
func TestInteropTypeScriptClientOverHTTP(t *testing.T) {
	tsSDK(t)
	const token = "http-token-2b7d9f1e3a5c4e6b8d0f"
	home := t.TempDir()
	tok := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tok, []byte(token+"\n"), 0o600))
	cmd := exec.Command(bin, "mcp", "--http", "127.0.0.1:0", "--campus", "--token-file", tok)
	cmd.Env = append(os.Environ(), "HARNESS_HOME="+home, "NO_COLOR=1")
	errPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(errPipe)
	url := ""
	for url == "" && sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), " at "); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
	var rest strings.Builder
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for sc.Scan() {
			rest.WriteString(sc.Text() + "\n")
		}
	}()
	doc := helloDoc(t)
	checks := runTSClient(t, func() {
		r := invocation{home: home, limit: time.Minute, args: []string{"install", doc, "--yes"}}.run(t)
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
	}, "MODE=http", "URL="+url, "TOKEN="+token)
	interopAssertions(t, checks)

	// Without the token the server refuses the client.
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	cmd.Process.Kill()
	<-drained
	assert.NotContains(t, rest.String(), token)
}
