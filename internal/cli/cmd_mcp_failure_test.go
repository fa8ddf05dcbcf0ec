package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
	doc := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":       "---\nid: leaky\nname: Leaky\ndescription: Repeats the portal.\nversion: 1.0.0\naccess:\n  campus: [portal]\n---\nUse leaky.\n",
		"tools/echo.yaml": "description: Echoes.\neffect: read\nsteps:\n  - request: {service: portal, path: /api/other}\n  - fail: 'The portal said ${ .body | tostring }'\n",
		"tools/hdr.yaml":  "description: Refused by the SDK.\neffect: read\ninput:\n  type: object\n  properties:\n    q: {type: array, x-mcp-header: X-Q}\nsteps:\n  - return: '1'\n",
	})
	installLocal(t, home, doc, "community")
	// the user let the settings tools write without asking
	require.NoError(t, os.WriteFile(filepath.Join(home, "permissions.json"), []byte(`{"plugins": {"settings": {"modes": {"write": "auto"}}}}`), 0o600))

	m := startMCP(t, home, "--services", services, "--secrets", secrets)
	cs, ctx := m.cs, context.Background()

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

	assert.Equal(t, 0, m.stop(t), m.stderr.String())
	assert.Contains(t, m.stderr.String(), "leaky.hdr is not served over MCP")
	assert.NotContains(t, m.stderr.String(), "s3cr3t")
	assert.NotContains(t, m.stdout.String(), "s3cr3t")
}
