package cli

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

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
