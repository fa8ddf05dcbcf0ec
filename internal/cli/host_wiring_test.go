package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// todayDoc is a document whose one tool returns jq's now as a Beijing date.
func todayDoc(t *testing.T) string {
	return writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":    "---\nid: today\nname: T\ndescription: d\nversion: 1.0.0\n---\nI.\n",
		"tools/d.yaml": "description: d\neffect: read\nsteps:\n  - return: '(now + 8*3600) | strftime(\"%Y-%m-%d\")'\n",
		"tests/d.yaml": "cases:\n  - tool: d\n    expect: {output: \"2030-05-06\"}\n",
	})
}

// TestMCPClockFollowsHarnessNow: under `harness mcp`, as under run and
// test, jq's now starts at HARNESS_NOW (the one host sets the clock).
func TestMCPClockFollowsHarnessNow(t *testing.T) {
	home := t.TempDir()
	installLocal(t, home, todayDoc(t), "community")
	for _, day := range []string{"2030-05-06", "2031-01-02"} {
		m := startMCPEnv(t, map[string]string{"HARNESS_HOME": home, "HARNESS_NOW": day + "T09:00:00+08:00"})
		res, err := m.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "today__d", Arguments: map[string]any{}})
		require.NoError(t, err)
		txt := res.Content[0].(*mcp.TextContent).Text
		require.False(t, res.IsError, txt)
		var env map[string]any
		require.NoError(t, json.Unmarshal([]byte(txt), &env), txt)
		assert.Equal(t, day, env["data"], "jq's now under harness mcp")
		require.Equal(t, 0, m.stop(t), m.stderr.String())
	}
	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home, "HARNESS_NOW": "2031-01-02T09:00:00+08:00"}, "run", "today", "d")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "\"2031-01-02\"\n", out, "jq's now under harness run")
}

// TestSecretsFileModeWarnsEverywhere: a --secrets file other users can
// read is named in a warning by run and by mcp alike (one wiring), never
// with a value; a 0600 file draws none.
func TestSecretsFileModeWarnsEverywhere(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are Unix's")
	}
	srv := skeletonPortal(t)
	services, secrets := campusFiles(t, srv.URL, true)
	home := t.TempDir()
	installLocal(t, home, skeletonPath(), "community")
	warning := "harness: warning: " + secrets + " can be read by other users of this machine (mode 0644): chmod 600 it"
	for _, mode := range []os.FileMode{0o600, 0o644} {
		require.NoError(t, os.Chmod(secrets, mode))
		code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "run", skeletonPath(), "free",
			"--input", `{"building":"二教"}`, "--services", services, "--secrets", secrets)
		require.Equal(t, 0, code, errs)
		m := startMCP(t, home, "--services", services, "--secrets", secrets)
		res, err := m.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "classrooms-example__free", Arguments: map[string]any{"building": "二教"}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		require.Equal(t, 0, m.stop(t))
		mcpErrs := m.stderr.String()
		if mode == 0o600 {
			assert.NotContains(t, errs, "warning", "run: a 0600 file needs no warning")
			assert.NotContains(t, mcpErrs, "can be read by other users", "mcp: a 0600 file needs no warning")
			continue
		}
		assert.Contains(t, errs, warning, "run")
		assert.Contains(t, mcpErrs, warning, "mcp")
		assert.NotContains(t, errs+out+mcpErrs, "s3cr3t")
	}
}

// TestTestCommandLeavesTheKeystore: harness test runs every case with the
// case's own sessions on the one host's catalogue and clock, so it never
// opens the home keystore, whose loose mode stops run and mcp.
func TestTestCommandLeavesTheKeystore(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are Unix's")
	}
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "keystore.json"), []byte("{}"), 0o644))
	doc := todayDoc(t)
	env := map[string]string{"HARNESS_HOME": home, "HARNESS_NOW": "2030-05-06T09:00:00+08:00"}
	code, _, errs := runCLI(t, env, "run", doc, "d")
	require.Equal(t, ExitFailed, code, errs)
	assert.Contains(t, errs, "chmod 600")
	code, out, errs := runCLI(t, env, "test", doc)
	require.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "ok   today: 1 case passed")
	assert.NotContains(t, errs, "keystore")
}
