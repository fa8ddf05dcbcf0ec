package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMCPOverStdio speaks MCP's JSON-RPC lines to `harness mcp` on stdio:
// initialize, then tools/list, which names the bundled tools as plugin__tool.
func TestMCPOverStdio(t *testing.T) {
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(os.Environ(), "HARNESS_HOME="+t.TempDir())
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n") + "\n"
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	// stdin stays open until the answer is read: a client that hangs up ends the session.
	_, err = stdin.Write([]byte(in))
	require.NoError(t, err)
	defer stdin.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var names []string
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Tools []struct {
					Name        string         `json:"name"`
					InputSchema map[string]any `json:"inputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &msg), sc.Text())
		if msg.ID == 2 {
			for _, tl := range msg.Result.Tools {
				names = append(names, tl.Name)
				require.Equal(t, "object", tl.InputSchema["type"], tl.Name)
			}
			break
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	require.Contains(t, names, "wallet__cardBalance")
	require.Contains(t, names, "shuttle__book")
	require.NotContains(t, names, "grades__verifyGrades", "userOnly tools are not offered to the model")
}
