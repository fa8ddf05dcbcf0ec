package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunOnSimulatedCampus is the README's main command: a bundled
// document's tool against the campus started in process, signed with its
// demo session; HARNESS_NOW fixes the campus's clock and jq's now alike.
func TestRunOnSimulatedCampus(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home, "HARNESS_NOW": "2026-04-27T12:00:00+08:00"}
	code, out, errs := runCLI(t, env, "run", "--campus", "../../plugins-official/wallet", "cardBalance")
	require.Equal(t, 0, code, errs)
	var bal map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &bal), out)
	require.Contains(t, bal, "balanceYuan")
	require.IsType(t, float64(0), bal["balanceYuan"])

	code, out, errs = runCLI(t, env, "run", "--campus", "../../plugins-official/wallet", "transactions")
	require.Equal(t, 0, code, errs)
	var tx map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &tx), out)
	require.Equal(t, "2026-04-27", tx["to"], "today is HARNESS_NOW's day, for the campus and for jq")

	code, _, errs = runCLI(t, env, "run", "--campus", "--services", "x.yaml", "../../plugins-official/wallet", "cardBalance")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "--campus brings its own services")
}

// --campus is sealed: a built-in service the simulated campus does not
// simulate (the library) fails with a message naming it, and nothing is
// looked up or sent for it.
func TestRunCampusSealedNamesUnsimulatedService(t *testing.T) {
	dir := t.TempDir()
	writeDoc(t, dir, map[string]string{
		"PLUGIN.md": "---\nid: lib-events\nname: 图书馆\ndescription: 图书馆活动。\nversion: 0.1.0\naccess:\n  campus: [library]\n---\nUse `events`.\n",
		"tools/events.yaml": "description: Library events. Use for library questions.\neffect: read\ninput: { type: object }\nsteps:\n" +
			"  - request: { service: library, path: /cms/front/content/list/all }\n  - return: .body\n",
	})
	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": t.TempDir()}, "run", "--campus", dir, "events")
	require.Equal(t, ExitFailed, code, errs)
	require.Empty(t, out)
	require.Contains(t, errs, `campus service "library" is not served by the simulated campus (--campus), which reaches nothing beyond loopback`)
}

// --ca needs --resolve and a PEM certificate.
func TestRunCAFlagChecks(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	require.NoError(t, os.WriteFile(bad, []byte("not a certificate\n"), 0o600))
	env := map[string]string{"HARNESS_HOME": t.TempDir()}
	code, _, errs := runCLI(t, env, "run", "--campus", "--ca", bad, "../../plugins-official/wallet", "cardBalance")
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, "--resolve HOST:PORT:ADDR too")
	code, _, errs = runCLI(t, env, "run", "--campus", "--resolve", "news.example.edu.cn:443:127.0.0.1:9", "--ca", bad, "../../plugins-official/wallet", "cardBalance")
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, "holds no PEM certificate")
	code, _, errs = runCLI(t, env, "run", "--resolve", "news.example.edu.cn:443:127.0.0.1:9", "--ca", filepath.Join(dir, "missing.pem"), "../../plugins-official/wallet", "cardBalance")
	require.Equal(t, ExitUsage, code, errs)
	require.Contains(t, errs, "--ca")
}
