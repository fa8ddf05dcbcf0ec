package cli

import (
	"encoding/json"
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
