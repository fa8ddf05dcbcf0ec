package e2e

// Helpers of an attacker's pass over loading documents: lint, hash,
// review, diff, install, update, accept, list and remove, driven through the
// real binary against a real git smart-HTTP server and loopback web
// servers. Each test (install_limits, terminal_safe, tool_names,
// update_checks, diff_widening, concurrent, update_accept) names the attack
// and asserts what the engine must do about it.

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/gittest"
	"github.com/stretchr/testify/require"
)

// rtDoc is a valid front matter and body for id, with extra front-matter
// lines (each ending in "\n") and extra body text.
func rtDoc(id, version, extra, body string) string {
	return "---\nid: " + id + "\nname: Red team\ndescription: A document an attacker wrote.\nversion: " + version + "\n" + extra + "---\nInstructions.\n" + body
}

// rtTool is a read tool file.
const rtTool = "description: t\neffect: read\nsteps:\n  - return: '1'\n"

// harnessGuarded is harness with a guard: a run that does not end within
// limit is killed and fails the test (a hang is a defect; the limit is a
// guard, not an assertion about speed).
func harnessGuarded(t *testing.T, home string, env []string, limit time.Duration, args ...string) result {
	t.Helper()
	return invocation{home: home, env: env, limit: limit, args: args}.run(t)
}

// gitEnv points GitHub links at the test's git server.
func gitEnv(s *gittest.Server) []string { return []string{"HARNESS_GIT_BASE=" + s.Base()} }

// storeEmpty asserts that nothing was stored in home: no state entry, no
// store folder.
func storeEmpty(t *testing.T, home string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(home, "state.json")); err == nil {
		var st struct {
			Plugins map[string]json.RawMessage `json:"plugins"`
		}
		require.NoError(t, json.Unmarshal(b, &st))
		require.Empty(t, st.Plugins, "nothing may be installed")
	}
	des, _ := os.ReadDir(filepath.Join(home, "store"))
	require.Empty(t, des, "nothing may be stored")
}

// rtUpdate runs harness update --force --json and returns the one result
// for id.
func rtUpdate(t *testing.T, home string, env []string, id string) map[string]any {
	t.Helper()
	r := harnessGuarded(t, home, env, 60*time.Second, "update", "--force", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var out []map[string]any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var v any
		require.NoError(t, dec.Decode(&v), r.stdout)
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				out = append(out, x.(map[string]any))
			}
		case map[string]any:
			out = append(out, v)
		}
	}
	for _, o := range out {
		if o["id"] == id {
			return o
		}
	}
	t.Fatalf("no update result for %s in %s", id, r.stdout)
	return nil
}

// rtState reads one entry of state.json.
func rtState(t *testing.T, home, id string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "state.json"))
	require.NoError(t, err)
	var st struct {
		Plugins map[string]map[string]any `json:"plugins"`
	}
	require.NoError(t, json.Unmarshal(b, &st))
	e, ok := st.Plugins[id]
	require.True(t, ok, "%s is not installed", id)
	return e
}

// rawServer answers every connection with the bytes of answer, whatever
// they hold (a server net/http would not let the test write), and returns
// its http://127.0.0.1:PORT URL.
func rawServer(t *testing.T, answer string) string { return rawServerHolding(t, answer, 0) }

// rawServerHolding is rawServer that, when hold is not zero, keeps each
// connection open for hold after answering, reading what comes.
func rawServerHolding(t *testing.T, answer string, hold time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(max(hold, 10*time.Second)))
				buf := make([]byte, 8192)
				_, _ = c.Read(buf)
				_, _ = io.WriteString(c, answer)
				if hold > 0 {
					_, _ = io.Copy(io.Discard, c)
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}
