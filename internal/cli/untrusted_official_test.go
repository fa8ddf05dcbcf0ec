package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoticeTextTaintsTheTurn: notices are third-party text (the
// reference's own example), so reading them taints the session, and the
// agent's later automatic write (campus-events' addReminder, write auto by
// the document's defaults) asks instead of running. Before, the notices
// tools were trusted and the reminder was written unasked.
func TestNoticeTextTaintsTheTurn(t *testing.T) {
	m := startMCP(t, t.TempDir(), "--campus")
	cs, ctx := m.cs, context.Background()
	add := &mcp.CallToolParams{Name: "campus-events__addReminder", Arguments: map[string]any{"title": "讲座", "start": "2026-12-20 19:30"}}

	// a clean session: the official write is auto and runs
	res, err := cs.CallTool(ctx, add)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))

	for _, tool := range []string{"notices__notices", "notices__deanNotices", "campus-events__reminders"} {
		m2 := startMCP(t, t.TempDir(), "--campus")
		res, err := m2.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		require.NoError(t, err)
		require.False(t, res.IsError, text(res))
		var env map[string]any
		require.NoError(t, json.Unmarshal([]byte(text(res)), &env))
		assert.Equal(t, true, env["untrusted"], tool)
		assert.Equal(t, true, res.Meta["pku-harness/untrusted"], tool)
		res, err = m2.cs.CallTool(ctx, add)
		require.NoError(t, err)
		assert.True(t, res.IsError, "after %s the write must ask: %s", tool, text(res))
		assert.Contains(t, text(res), "untrusted data", tool)
		assert.Equal(t, 0, m2.stop(t), m2.stderr.String())
	}
	assert.Equal(t, 0, m.stop(t), m.stderr.String())
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestLintOfficialWarnsForUntrustedHTML: with --trust official, a tool that
// returns text extracted from HTML without untrusted: true gets a warning
// at the tool, naming the step; community lint and a marked tool get none;
// every bundled official document lints clean of it.
func TestLintOfficialWarnsForUntrustedHTML(t *testing.T) {
	tool := "description: Page titles.\neffect: read\n%ssteps:\n  - request: {url: 'https://news.example.org/list'}\n  - html: {select: li, fields: {title: a}}\n"
	doc := func(extra string) string {
		return writeDoc(t, t.TempDir(), map[string]string{
			"PLUGIN.md":       "---\nid: pages\nname: Pages\ndescription: Pages.\nversion: 1.0.0\naccess:\n  web: [https://news.example.org]\n---\nRead pages.\n",
			"tools/list.yaml": strings.Replace(tool, "%s", extra, 1),
		})
	}
	plain := doc("")
	code, _, errs := runCLI(t, nil, "lint", "--trust", "official", plain)
	assert.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "tools/list.yaml:1:1: warning: tool list returns text extracted from HTML (step at tools/list.yaml:5:5) but is not marked untrusted: true")
	code, _, errs = runCLI(t, nil, "lint", plain)
	assert.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "untrusted")
	code, _, errs = runCLI(t, nil, "lint", "--trust", "official", doc("untrusted: true\n"))
	assert.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "untrusted")
	code, _, errs = runCLI(t, nil, "lint", "--trust", "root", plain)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--trust must be official or community")

	root := t.TempDir()
	all, err := official.Files()
	require.NoError(t, err)
	for _, id := range official.Names {
		dir := filepath.Join(root, id)
		for name, b := range all[id] {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
		}
		code, _, errs := runCLI(t, nil, "lint", "--trust", "official", dir)
		assert.Equal(t, 0, code, "%s: %s", id, errs)
		assert.NotContains(t, errs, "untrusted", id)
	}
}
