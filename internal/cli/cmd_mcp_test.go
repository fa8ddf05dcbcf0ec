package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPServesInstalledTools drives `harness mcp` through Main with the
// SDK's client over stdio pipes, calling the installed skeleton on a
// loopback portal through the signing proxy.
func TestMCPServesInstalledTools(t *testing.T) {
	srv := skeletonPortal(t)
	services, secrets := campusFiles(t, srv.URL, true)
	home := t.TempDir()
	installLocal(t, home, skeletonPath(), "community")

	m := startMCP(t, home, "--services", services, "--secrets", secrets)
	cs, ctx := m.cs, context.Background()

	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
	}
	assert.True(t, names["classrooms-example__free"])
	assert.True(t, names["canteen__crowd"], "bundled official tools are served too")

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "classrooms-example__free", Arguments: map[string]any{"building": "二教"}})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	txt := res.Content[0].(*mcp.TextContent).Text
	require.False(t, res.IsError, txt)
	var env map[string]any
	require.NoError(t, json.Unmarshal([]byte(txt), &env))
	assert.Equal(t, true, env["untrusted"])
	assert.Equal(t, map[string]any{"plugin": "classrooms-example", "tool": "free", "trust": "community"}, env["source"])
	assert.Equal(t, map[string]any{"building": "二教", "rooms": []any{map[string]any{"room": "二教101", "seats": 120.0}}}, env["data"])
	assert.NotContains(t, txt, "s3cr3t")

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "classrooms-example__free", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "refused (bad_input)")

	assert.Equal(t, 0, m.stop(t), m.stderr.String())
}

// mcpSession is `harness mcp` run through Main on stdio pipes, with the
// SDK's client connected to it.
type mcpSession struct {
	cs             *mcp.ClientSession
	in             *io.PipeWriter
	stdout, stderr strings.Builder
	done           chan int
}

// startMCP starts `harness mcp ARGS...` with HARNESS_HOME=home.
func startMCP(t *testing.T, home string, args ...string) *mcpSession {
	t.Helper()
	return startMCPEnv(t, map[string]string{"HARNESS_HOME": home}, args...)
}

// startMCPEnv starts `harness mcp ARGS...` with the environment env.
func startMCPEnv(t *testing.T, env map[string]string, args ...string) *mcpSession {
	t.Helper()
	inR, inW := io.Pipe()   // client -> server
	outR, outW := io.Pipe() // server -> client
	m := &mcpSession{in: inW, done: make(chan int, 1)}
	go func() {
		code := Main(append([]string{"mcp"}, args...), inR, io.MultiWriter(outW, &m.stdout), &m.stderr,
			func(k string) string { return env[k] })
		outW.Close()
		m.done <- code
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	m.cs = cs
	return m
}

// stop closes the client and the server's stdin and returns its exit code;
// stdout and stderr are complete after it.
func (m *mcpSession) stop(t *testing.T) int {
	t.Helper()
	require.NoError(t, m.cs.Close())
	m.in.Close()
	return <-m.done
}

// TestMCPAnswersWhatWasReadBeforeEOF is `printf 'initialize\nping\n' |
// harness mcp`: both are answered, then it exits 0 (5 runs of 5).
func TestMCPAnswersWhatWasReadBeforeEOF(t *testing.T) {
	home := t.TempDir()
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	for run := 0; run < 5; run++ {
		var out, errs strings.Builder
		code := Main([]string{"mcp"}, strings.NewReader(in), &out, &errs, func(k string) string { return map[string]string{"HARNESS_HOME": home}[k] })
		require.Equal(t, 0, code, errs.String())
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		require.Len(t, lines, 2, out.String())
		assert.Contains(t, lines[0], `"id":1,"result"`)
		assert.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{}}`, lines[1])
	}
}

// TestMCPMalformedLinesThroughMain: the command's stdio is the checking
// transport: bad lines are answered and the session goes on.
func TestMCPMalformedLinesThroughMain(t *testing.T) {
	home := t.TempDir()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`not json`,
		`[]`,
		`{}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"} `,
	}, "\n") + "\n"
	var out, errs strings.Builder
	code := Main([]string{"mcp"}, strings.NewReader(in), &out, &errs, func(k string) string { return map[string]string{"HARNESS_HOME": home}[k] })
	require.Equal(t, 0, code, errs.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 5, out.String())
	// bad lines are answered as they are read, so answers may come in
	// another order than the lines
	var codes []float64
	results := map[float64]bool{}
	for _, l := range lines {
		var m struct {
			ID     any             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct{ Code float64 }
		}
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m.Error != nil {
			assert.Nil(t, m.ID, l)
			codes = append(codes, m.Error.Code)
		} else {
			results[m.ID.(float64)] = true
		}
	}
	assert.ElementsMatch(t, []float64{-32700, -32600, -32600}, codes)
	assert.Equal(t, map[float64]bool{1: true, 2: true}, results)
}

func TestModesShowsAndSetsWithinTrust(t *testing.T) {
	home := t.TempDir()
	id := installLocal(t, home, skeletonPath(), "community")
	env := map[string]string{"HARNESS_HOME": home}

	code, out, errs := runCLI(t, env, "modes", id)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, id+" (community, installed)")
	assert.Regexp(t, `read\s+auto\s+auto\s+auto\s+free`, out)
	assert.Regexp(t, `money\s+ask\s+ask\s+ask\s+-`, out)

	code, _, errs = runCLI(t, env, "modes", id, "money", "auto")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "refused: a community document's money tools cannot be auto: the loosest allowed is ask")

	code, out, errs = runCLI(t, env, "modes", id, "read", "off")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, id+" read: off (was auto)\n", out)
	state, err := os.ReadFile(filepath.Join(home, "state.json"))
	require.NoError(t, err)
	assert.Contains(t, string(state), `"read": "off"`, "an installed document's modes live in state.json")

	code, out, errs = runCLI(t, env, "modes", id, "--json")
	require.Equal(t, 0, code, errs)
	var got struct {
		Effects []struct{ Effect, Mode, Set string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Effects, 4)
	assert.Equal(t, "off", got.Effects[0].Mode)
	assert.Equal(t, "off", got.Effects[0].Set)

	code, _, errs = runCLI(t, env, "modes", id, "read", "default")
	require.Equal(t, 0, code, errs)
	code, _, _ = runCLI(t, env, "modes", "shuttle", "write", "auto")
	require.Equal(t, 0, code)
	perms, err := os.ReadFile(filepath.Join(home, "permissions.json"))
	require.NoError(t, err)
	assert.Contains(t, string(perms), `"write": "auto"`, "a bundled document's modes live in permissions.json")

	code, _, _ = runCLI(t, env, "modes", "nope")
	assert.Equal(t, 1, code)
	code, _, _ = runCLI(t, env, "modes", id, "writes", "auto")
	assert.Equal(t, 2, code)
	code, _, _ = runCLI(t, env, "modes", id, "read")
	assert.Equal(t, 2, code)
}

// TestRunRefusalNamesTheModesCommand: a refusal says which command allows
// the call.
func TestRunRefusalNamesTheModesCommand(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home}
	in := `{"routeId":7,"date":"2026-12-02","timeId":1}`
	code, _, errs := runCLI(t, env, "run", "shuttle", "book", "--actor", "agent", "--input", in)
	assert.Equal(t, 3, code)
	assert.Contains(t, errs, "run `harness modes shuttle write auto` to allow it without asking, or pass --approve")
	code, _, _ = runCLI(t, env, "modes", "shuttle", "write", "off")
	require.Equal(t, 0, code)
	code, _, errs = runCLI(t, env, "run", "shuttle", "book", "--actor", "agent", "--input", in)
	assert.Equal(t, 3, code)
	assert.Contains(t, errs, "run `harness modes shuttle write auto` to allow it")
}

// TestMCPListChangedFromAnotherCommand: `harness modes` run beside a
// serving `harness mcp` (another Main, as another process would) reaches
// the client as tools/list_changed, and the list follows.
func TestMCPListChangedFromAnotherCommand(t *testing.T) {
	home := t.TempDir()
	id := installLocal(t, home, skeletonPath(), "community")
	env := map[string]string{"HARNESS_HOME": home}
	changed := make(chan struct{}, 10)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	var errs strings.Builder
	go func() {
		code := Main([]string{"mcp"}, inR, outW, &errs, func(k string) string { return env[k] })
		outW.Close()
		done <- code
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	has := func(name string) bool {
		list, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		for _, tl := range list.Tools {
			if tl.Name == name {
				return true
			}
		}
		return false
	}
	require.True(t, has("classrooms-example__free"))
	wait := func() {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(15 * time.Second):
			t.Fatal("no tools/list_changed")
		}
	}
	code, _, stderr := runCLI(t, env, "modes", id, "read", "off")
	require.Equal(t, 0, code, stderr)
	wait()
	assert.False(t, has("classrooms-example__free"))
	code, _, stderr = runCLI(t, env, "modes", id, "read", "default")
	require.Equal(t, 0, code, stderr)
	wait()
	assert.True(t, has("classrooms-example__free"))
	require.NoError(t, cs.Close())
	inW.Close()
	assert.Equal(t, 0, <-done, errs.String())
}

func TestMCPHTTPFlagsAreChecked(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home}
	code, _, errs := runCLI(t, env, "mcp", "--http", "0.0.0.0:0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "loopback addresses only")
	code, _, errs = runCLI(t, env, "mcp", "--http", "192.168.1.1:80")
	assert.Equal(t, 2, code)
	code, _, errs = runCLI(t, env, "mcp", "--token-file", filepath.Join(home, "t"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--token-file needs --http")
	empty := filepath.Join(home, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	code, _, errs = runCLI(t, env, "mcp", "--http", "127.0.0.1:0", "--token-file", empty)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "is empty")
	for addr, want := range map[string]string{"": "127.0.0.1:0", "8080": "127.0.0.1:8080", "localhost:9": "127.0.0.1:9", "[::1]:7": "[::1]:7"} {
		got, err := loopbackAddr(addr)
		require.NoError(t, err, addr)
		assert.Equal(t, want, got, addr)
	}
}
