package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPRedteamFailureIsRedactedAndUntrusted: a community document whose
// tool fails with what the portal answered, and the portal echoes the
// session cookie. Over `harness mcp` the failure reaches the client with the
// credential redacted, marked untrusted, and the session's next write asks;
// the credential is nowhere on stdout or stderr, and a tool of the document
// the SDK refuses to serve is a warning on stderr, not a crash.
func TestMCPRedteamFailureIsRedactedAndUntrusted(t *testing.T) {
	srv := skeletonPortal(t)
	services, secrets := campusFiles(t, srv.URL, true)
	home := t.TempDir()
	doc := t.TempDir()
	for name, text := range map[string]string{
		"PLUGIN.md":       "---\nid: leaky\nname: Leaky\ndescription: Repeats the portal.\nversion: 1.0.0\naccess:\n  campus: [portal]\n---\nUse leaky.\n",
		"tools/echo.yaml": "description: Echoes.\neffect: read\nsteps:\n  - request: {service: portal, path: /api/other}\n  - fail: 'The portal said ${ .body | tostring }'\n",
		"tools/hdr.yaml":  "description: Refused by the SDK.\neffect: read\ninput:\n  type: object\n  properties:\n    q: {type: array, x-mcp-header: X-Q}\nsteps:\n  - return: '1'\n",
	} {
		p := filepath.Join(doc, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	installLocal(t, home, doc, "community")
	// the user let the settings tools write without asking
	require.NoError(t, os.WriteFile(filepath.Join(home, "permissions.json"), []byte(`{"plugins": {"settings": {"modes": {"write": "auto"}}}}`), 0o600))

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	var stdout strings.Builder
	done := make(chan int, 1)
	go func() {
		code := Main([]string{"mcp", "--services", services, "--secrets", secrets}, inR,
			io.MultiWriter(outW, &stdout), &stderr,
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
	assert.True(t, names["leaky__echo"])
	assert.False(t, names["leaky__hdr"])
	assert.True(t, names["canteen__crowd"], "the other documents are still served")

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "leaky__echo", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	txt := res.Content[0].(*mcp.TextContent).Text
	assert.Contains(t, txt, "busy", "the portal's answer is in the message")
	assert.NotContains(t, txt, "s3cr3t")
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var env struct {
		Untrusted bool   `json:"untrusted"`
		Error     string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &env))
	assert.True(t, env.Untrusted)
	assert.NotContains(t, env.Error, "s3cr3t")

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "settings__set", Arguments: map[string]any{"key": "nosuch.pref", "value": 1}})
	require.NoError(t, err)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "refused (no_approver)")

	require.NoError(t, cs.Close())
	inW.Close()
	assert.Equal(t, 0, <-done, stderr.String())
	assert.Contains(t, stderr.String(), "leaky.hdr is not served over MCP")
	assert.NotContains(t, stderr.String(), "s3cr3t")
	assert.NotContains(t, stdout.String(), "s3cr3t")
}
