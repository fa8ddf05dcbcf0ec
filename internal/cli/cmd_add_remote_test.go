package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/internal/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const remoteToken = "tok-remote-7c1e9b3a5d2f4e6a8b0c"

// addDemoRemote adds the demo canteen server to a new home with a token.
func addDemoRemote(t *testing.T) (home string, srv *mcptest.Server) {
	t.Helper()
	srv = mcptest.Canteen(t, remoteToken)
	home = t.TempDir()
	tok := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tok, []byte(remoteToken+"\n"), 0o600))
	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "add-remote", srv.URL, "--token-file", tok, "--yes")
	require.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "mcp-demo-canteen — remote plugin")
	assert.Contains(t, out, "mcp-demo-canteen.menu")
	assert.Contains(t, out, "added mcp-demo-canteen (2 tools, community, remote)")
	assert.NotContains(t, out+errs, remoteToken)
	return home, srv
}

func TestAddRemoteStoresTheManifestAndKeepsTheTokenInTheKeystore(t *testing.T) {
	home, srv := addDemoRemote(t)
	for _, a := range srv.Auths() {
		assert.Equal(t, "Bearer "+remoteToken, a)
	}
	b, err := os.ReadFile(filepath.Join(home, "remote.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"effect": "read"`)
	assert.NotContains(t, string(b), remoteToken, "the token is not in the state")
	fi, err := os.Stat(filepath.Join(home, "keystore.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "tools", "--json")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "mcp-demo-canteen__menu")
	assert.Contains(t, out, "mcp-demo-canteen__order")
	assert.NotContains(t, out, remoteToken)
}

func TestAddRemoteNeedsConfirmationAndStoresNothingWithout(t *testing.T) {
	srv := mcptest.Canteen(t, "")
	home := t.TempDir()
	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "add-remote", srv.URL)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "mcp-demo-canteen.order")
	assert.Contains(t, errs, "confirm with --yes")
	_, err := os.Stat(filepath.Join(home, "remote.json"))
	assert.True(t, os.IsNotExist(err))
}

func TestAddRemoteRefusesBadURLsAndDeadServers(t *testing.T) {
	home := t.TempDir()
	for _, u := range []string{"http://mcp.example.com/mcp", "https://portal.pku.edu.cn/mcp", "https://10.1.2.3/mcp"} {
		code, _, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "add-remote", u, "--yes")
		assert.Equal(t, 1, code, u)
		assert.NotEmpty(t, errs, u)
	}
	srv := mcptest.Canteen(t, remoteToken)
	code, _, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "add-remote", srv.URL, "--yes")
	assert.Equal(t, 1, code, "no token: the server answers 401")
	assert.Contains(t, errs, "nothing stored")
	_, err := os.Stat(filepath.Join(home, "remote.json"))
	assert.True(t, os.IsNotExist(err))
}

func TestMCPServesRemotePluginsUnderTheSameRules(t *testing.T) {
	home, srv := addDemoRemote(t)
	m := startMCP(t, home)
	ctx := context.Background()
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp-demo-canteen__menu", Arguments: map[string]any{}})
	require.NoError(t, err)
	txt := res.Content[0].(*mcp.TextContent).Text
	require.False(t, res.IsError, txt)
	var env map[string]any
	require.NoError(t, json.Unmarshal([]byte(txt), &env))
	assert.Equal(t, true, env["untrusted"], "every remote result is untrusted")
	assert.Equal(t, map[string]any{"plugin": "mcp-demo-canteen", "tool": "menu", "trust": "community"}, env["source"])
	assert.Equal(t, map[string]any{"dishes": []any{"牛肉面", "宫保鸡丁"}}, env["data"])

	// A write asks; this client cannot answer an elicitation, so it is refused
	// and the server never sees the order.
	res, err = m.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp-demo-canteen__order", Arguments: map[string]any{"dish": "牛肉面"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Empty(t, srv.Orders())
	assert.Equal(t, 0, m.stop(t), m.stderr.String())
	assert.False(t, strings.Contains(m.stdout.String()+m.stderr.String(), remoteToken))
}

func TestListShowsRemotePlugins(t *testing.T) {
	home, _ := addDemoRemote(t)
	env := map[string]string{"HARNESS_HOME": home}
	code, out, errs := runCLI(t, env, "list")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "remote plugins (MCP servers, community):")
	assert.Contains(t, out, "mcp-demo-canteen")
	assert.NotContains(t, out, "no documents installed")
	code, out, errs = runCLI(t, env, "list", "--json")
	require.Equal(t, 0, code, errs)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Len(t, list, 1)
	assert.Equal(t, "mcp-demo-canteen", list[0]["id"])
	assert.Equal(t, "remote", list[0]["kind"])
	assert.Equal(t, "community", list[0]["trust"])
	assert.NotContains(t, out, remoteToken)
}

func TestRemoveForgetsARemotePluginAndItsToken(t *testing.T) {
	home, _ := addDemoRemote(t)
	env := map[string]string{"HARNESS_HOME": home}
	code, out, errs := runCLI(t, env, "remove", "mcp-demo-canteen")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "removed mcp-demo-canteen")
	assert.Contains(t, out, "deleted its token from the keystore")
	ks, err := os.ReadFile(filepath.Join(home, "keystore.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(ks), remoteToken)
	code, out, _ = runCLI(t, env, "tools")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "mcp-demo-canteen")
	code, _, errs = runCLI(t, env, "remove", "mcp-demo-canteen")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "not added")
}

func TestUpdateHoldsANewRemoteWriteToolUntilAccepted(t *testing.T) {
	home, srv := addDemoRemote(t)
	env := map[string]string{"HARNESS_HOME": home}
	srv.MCP.AddTool(&mcp.Tool{Name: "wipe", Description: "Deletes every order.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
		})
	code, out, errs := runCLI(t, env, "update", "--check", "--force")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "mcp-demo-canteen: its tool list asks for wider access")
	code, out, errs = runCLI(t, env, "update", "--force")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "wipe: new write tool")
	code, out, _ = runCLI(t, env, "tools")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "mcp-demo-canteen__wipe", "held: the cached tools stay")
	code, out, _ = runCLI(t, env, "list")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "harness accept mcp-demo-canteen")

	code, out, errs = runCLI(t, env, "accept", "mcp-demo-canteen")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "+ wipe: new write tool")
	code, out, _ = runCLI(t, env, "tools")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "mcp-demo-canteen__wipe")
	code, _, errs = runCLI(t, env, "accept", "mcp-demo-canteen")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "no pending update")
}

func TestRunCallsARemoteToolUnderTheRules(t *testing.T) {
	home, srv := addDemoRemote(t)
	env := map[string]string{"HARNESS_HOME": home}
	code, out, errs := runCLI(t, env, "run", "mcp-demo-canteen", "menu")
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `{"dishes":["牛肉面","宫保鸡丁"]}`, out)

	code, _, errs = runCLI(t, env, "run", "mcp-demo-canteen", "order", "--actor", "agent", "--input", `{"dish":"牛肉面"}`)
	assert.Equal(t, 3, code, "a remote write asks; without --approve it is refused")
	assert.Contains(t, errs, "refused")
	assert.Empty(t, srv.Orders())
	code, _, _ = runCLI(t, env, "run", "mcp-demo-canteen", "order", "--actor", "scheduler", "--input", `{"dish":"牛肉面"}`, "--approve")
	assert.Equal(t, 3, code, "the scheduler only reads")
	code, out, errs = runCLI(t, env, "run", "mcp-demo-canteen", "order", "--actor", "agent", "--input", `{"dish":"牛肉面"}`, "--approve")
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `{"ordered":true}`, out)
	assert.Equal(t, []map[string]any{{"dish": "牛肉面"}}, srv.Orders())

	code, _, _ = runCLI(t, env, "run", "mcp-demo-canteen", "nosuch")
	assert.Equal(t, 2, code)
	code, _, _ = runCLI(t, env, "run", "mcp-demo-canteen", "menu", "--campus")
	assert.Equal(t, 2, code)
	assert.NotContains(t, out+errs, remoteToken)
}

func TestAddRemoteFromAnotherURLKeepsTheFirstToken(t *testing.T) {
	home, _ := addDemoRemote(t)
	other := mcptest.Canteen(t, "")
	code, _, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "add-remote", other.URL, "--yes",
		"--token-file", writeToken(t, "tok-other-aaaaaaaaaaaaaaaa"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "is already added from")
	ks, err := os.ReadFile(filepath.Join(home, "keystore.json"))
	require.NoError(t, err)
	assert.Contains(t, string(ks), remoteToken, "the first plugin's token is kept")
	assert.NotContains(t, string(ks), "tok-other-")
}

func writeToken(t *testing.T, tok string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(p, []byte(tok+"\n"), 0o600))
	return p
}
