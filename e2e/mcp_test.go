package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
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

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}

// TestMCPOverHTTPAgainstTheCampus drives `harness mcp --http --campus
// --token-file` with the Go SDK's Streamable HTTP client: a read with
// simulated-campus data, honest annotations, a booking refused without
// elicitation (naming the modes command) and made with it; then SIGTERM
// ends the server with exit 0.
func TestMCPOverHTTPAgainstTheCampus(t *testing.T) {
	home := t.TempDir()
	tokenFile := filepath.Join(home, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("e2e-bearer-token\n"), 0o600))
	cmd := exec.Command(bin, "mcp", "--http", "127.0.0.1:0", "--campus", "--token-file", tokenFile)
	// a morning, so that the day's departures are still bookable whatever
	// the hour the test runs at (the simulated campus follows the clock)
	cmd.Env = append(os.Environ(), "HARNESS_HOME="+home, "HARNESS_NOW=2026-12-02T06:00:00+08:00")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	urls := make(chan string, 1)
	var (
		errMu   sync.Mutex
		errText strings.Builder
	)
	stderrText := func() string {
		errMu.Lock()
		defer errMu.Unlock()
		return errText.String()
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			errMu.Lock()
			errText.WriteString(sc.Text() + "\n")
			errMu.Unlock()
			if i := strings.Index(sc.Text(), "http://"); i >= 0 {
				select {
				case urls <- strings.Fields(sc.Text()[i:])[0]:
				default:
				}
			}
		}
		exited <- cmd.Wait()
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("no URL on stderr")
	}
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
	require.True(t, strings.HasSuffix(url, "/mcp"), url)

	ctx := context.Background()
	connect := func(token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{token}}}
		return mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts).Connect(ctx, tr, nil)
	}
	_, err = connect("wrong", nil)
	require.Error(t, err, "a wrong token is refused")

	cs, err := connect("e2e-bearer-token", nil)
	require.NoError(t, err)
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	tools := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	require.Contains(t, tools, "shuttle__cancelBooking")
	assert.True(t, *tools["shuttle__cancelBooking"].Annotations.DestructiveHint)
	assert.False(t, *tools["shuttle__book"].Annotations.DestructiveHint, "a booking only adds")
	assert.True(t, *tools["shuttle__book"].Annotations.OpenWorldHint)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shuttle__departures", Arguments: map[string]any{"routeId": 7}})
	require.NoError(t, err)
	txt := res.Content[0].(*mcp.TextContent).Text
	require.False(t, res.IsError, txt)
	var env struct {
		Data struct {
			Departures []struct {
				State  string `json:"state"`
				Time   string `json:"time"`
				TimeID int    `json:"timeId"`
			} `json:"departures"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(txt), &env))
	require.NotEmpty(t, env.Data.Departures, "simulated-campus departures")
	// the first departure still bookable: which of the day's departures
	// have gone depends on the hour the test runs at
	i := slices.IndexFunc(env.Data.Departures, func(d struct {
		State  string `json:"state"`
		Time   string `json:"time"`
		TimeID int    `json:"timeId"`
	}) bool {
		return d.State == "bookable"
	})
	require.GreaterOrEqual(t, i, 0, "a bookable departure: %s", txt)
	dep := env.Data.Departures[i]
	assert.Equal(t, false, res.Meta["pku-harness/untrusted"])

	book := &mcp.CallToolParams{Name: "shuttle__book", Arguments: map[string]any{"routeId": 7, "date": dep.Time[:10], "timeId": dep.TimeID}}
	res, err = cs.CallTool(ctx, book)
	require.NoError(t, err)
	require.True(t, res.IsError, "a client without elicitation cannot approve")
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "run `harness modes shuttle write auto` to allow it without asking")

	asked := 0
	cs2, err := connect("e2e-bearer-token", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
	require.NoError(t, err)
	defer cs2.Close()
	res, err = cs2.CallTool(ctx, book)
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content[0].(*mcp.TextContent).Text)
	assert.Equal(t, 1, asked)
	assert.NotContains(t, stderrText(), "e2e-bearer-token", "the token is never printed")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, stderrText())
		exited <- nil
	case <-time.After(20 * time.Second):
		t.Fatal("SIGTERM did not end the server")
	}
}
