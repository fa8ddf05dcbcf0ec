package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogoutKeepsRemotePluginTokens: logout forgets campus sessions; a
// remote plugin's bearer token, kept in the same keystore under the
// plugin's id, is not a campus session: it stays, and the plugin's calls
// keep their token (remove forgets it).
func TestLogoutKeepsRemotePluginTokens(t *testing.T) {
	home, _ := addDemoRemote(t)
	env := map[string]string{"HARNESS_HOME": home}
	code, out, errs := runCLI(t, env, "logout")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, "mcp-demo-canteen")
	ks, err := os.ReadFile(filepath.Join(home, "keystore.json"))
	require.NoError(t, err)
	assert.Contains(t, string(ks), remoteToken)
	code, out, errs = runCLI(t, env, "run", "mcp-demo-canteen", "menu")
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `{"dishes":["牛肉面","宫保鸡丁"]}`, out)
}
