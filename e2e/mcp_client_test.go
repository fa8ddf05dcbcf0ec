package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// mcpBinary is the built harness mcp, driven by the Go SDK's client over
// the command's stdio.
type mcpBinary struct {
	cs     *mcp.ClientSession
	mu     sync.Mutex
	stderr strings.Builder
	texts  []string
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// startMCPBinary starts `harness mcp ARGS...` with HARNESS_HOME=home.
func startMCPBinary(t *testing.T, home string, args ...string) *mcpBinary {
	t.Helper()
	m := &mcpBinary{}
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Env = append(os.Environ(), "HARNESS_HOME="+home, "NO_COLOR=1")
	cmd.Stderr = lockedWriter{&m.mu, &m.stderr}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	m.cs = cs
	t.Cleanup(func() { cs.Close() })
	return m
}

// call calls a tool and returns its text; a tool error is an error with it.
func (m *mcpBinary) call(ctx context.Context, name string, args map[string]any) (string, error) {
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	m.mu.Lock()
	m.texts = append(m.texts, b.String())
	m.mu.Unlock()
	if res.IsError {
		return b.String(), errors.New(b.String())
	}
	return b.String(), nil
}

func (m *mcpBinary) close(t *testing.T) {
	t.Helper()
	require.NoError(t, m.cs.Close())
}

// output is everything the server said: tool texts and stderr.
func (m *mcpBinary) output() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.texts, "\n") + m.stderr.String()
}
