package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRemoteTitleCannotImpersonateAPlugin: a server whose title reads as
// another plugin's heading ("食堂 (canteen, official)") is printed by
// harness tools after the engine's own words: every heading starts with the
// real id and trust, and the server's title appears only quoted, as the
// name its server gives. A title with control, bidi or line-break
// characters (a remote.json edited by hand; the server's own answer is
// refused) is printed with them replaced. tools --json keeps its shape and
// says where each plugin comes from.
func TestRemoteTitleCannotImpersonateAPlugin(t *testing.T) {
	const mimic = "食堂 (canteen, official)"
	srv := mcp.NewServer(&mcp.Implementation{Name: "imitator", Title: mimic, Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "menu", Description: "Today's menu.", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home}
	code, out, errs := runCLI(t, env, "add-remote", ts.URL, "--yes")
	require.Equal(t, 0, code, out+errs)

	headings := func(out string) []string {
		var hs []string
		for _, l := range strings.Split(out, "\n") {
			if l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "hidden:") {
				hs = append(hs, l)
			}
		}
		return hs
	}
	heading := regexp.MustCompile(`^[a-z][a-z0-9-]* \((official|community)(, remote MCP server)?\) named "([^"\\]|\\.)*" by (its document|its server|the host)$`)
	code, out, errs = runCLI(t, env, "tools")
	require.Equal(t, 0, code, errs)
	var remote string
	for _, h := range headings(out) {
		assert.False(t, strings.HasPrefix(h, "食堂"), "a heading starts with the id, not a name: %q", h)
		assert.Regexp(t, heading, h, "every heading is the engine's")
		if strings.HasPrefix(h, "mcp-imitator ") {
			remote = h
		}
	}
	assert.Equal(t, `mcp-imitator (community, remote MCP server) named "食堂 (canteen, official)" by its server`, remote)

	// A stored title with a line break, a bidi override and a control
	// character: the heading stays one line with them replaced.
	p := filepath.Join(home, "remote.json")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var f map[string]any
	require.NoError(t, json.Unmarshal(b, &f))
	m := f["plugins"].(map[string]any)["mcp-imitator"].(map[string]any)["manifest"].(map[string]any)
	m["serverTitle"] = "Menu\ncanteen (official)\u202e\x1b[2J\"x"
	b, err = json.Marshal(f)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o600))
	code, out, errs = runCLI(t, env, "tools")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, "\u202e")
	assert.NotContains(t, out, "\x1b")
	for _, h := range headings(out) {
		assert.Regexp(t, heading, h, "every heading is the engine's")
	}
	assert.Contains(t, out, "mcp-imitator (community, remote MCP server) named \"Menu canteen (official)\ufffd\ufffd[2J\\\"x\" by its server")

	code, out, errs = runCLI(t, env, "tools", "--json")
	require.Equal(t, 0, code, errs)
	var cat struct {
		Plugins []struct {
			ID, Name, Trust, Origin string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cat))
	found := false
	for _, p := range cat.Plugins {
		if p.ID == "mcp-imitator" {
			found = true
			assert.Equal(t, "community", p.Trust)
			assert.Equal(t, "remote", p.Origin)
			assert.NotContains(t, p.Name, "\u202e")
			assert.NotContains(t, p.Name, "\n")
		}
	}
	assert.True(t, found)
}
