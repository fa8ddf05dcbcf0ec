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

	inR, inW := io.Pipe()   // client -> server
	outR, outW := io.Pipe() // server -> client
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		code := Main([]string{"mcp", "--services", services, "--secrets", secrets}, inR, outW, &stderr,
			func(k string) string { return map[string]string{"HARNESS_HOME": home}[k] })
		outW.Close()
		done <- code
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)

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

	require.NoError(t, cs.Close())
	inW.Close()
	assert.Equal(t, 0, <-done, stderr.String())
}
