package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPStandingGrant drives `harness mcp --campus` on stdio with the Go
// SDK's client: the official shuttle booking asks, the form offers once or
// always, the client answers always and the next booking runs without a
// question; `harness grants` in another process lists the grant, `harness
// revoke` takes it back and the running server asks again at once.
func TestMCPStandingGrant(t *testing.T) {
	home := t.TempDir()
	env := append(os.Environ(), "HARNESS_HOME="+home, "HARNESS_NOW=2026-12-02T06:00:00+08:00")
	cmd := exec.Command(bin, "mcp", "--campus")
	cmd.Env = env
	var offered []any
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			s, _ := req.Params.RequestedSchema.(map[string]any)
			props, _ := s["properties"].(map[string]any)
			g, _ := props["grant"].(map[string]any)
			offered = append(offered, g["enum"])
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"grant": "always"}}, nil
		}}).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shuttle__departures", Arguments: map[string]any{"routeId": 7}})
	require.NoError(t, err)
	var deps struct {
		Data struct {
			Departures []struct {
				State  string `json:"state"`
				Time   string `json:"time"`
				TimeID int    `json:"timeId"`
			} `json:"departures"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &deps))
	var bookable []map[string]any
	for _, d := range deps.Data.Departures {
		if d.State == "bookable" {
			bookable = append(bookable, map[string]any{"routeId": 7, "date": d.Time[:10], "timeId": d.TimeID})
		}
	}
	require.GreaterOrEqual(t, len(bookable), 3, "three bookable departures")
	book := func(i int) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shuttle__book", Arguments: bookable[i]})
		require.NoError(t, err)
		require.False(t, res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	book(0)
	require.Len(t, offered, 1)
	assert.Equal(t, []any{"once", "always"}, offered[0])
	book(1)
	assert.Len(t, offered, 1, "the standing grant books without a question")

	harness := func(args ...string) string {
		c := exec.Command(bin, args...)
		c.Env = env
		out, err := c.Output()
		require.NoError(t, err, "%v", args)
		return string(out)
	}
	var gs struct {
		Grants []struct {
			Plugin, Tool string
			Applies      bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(harness("grants", "--json")), &gs))
	require.Len(t, gs.Grants, 1)
	assert.Equal(t, "shuttle", gs.Grants[0].Plugin)
	assert.Equal(t, "book", gs.Grants[0].Tool)
	assert.True(t, gs.Grants[0].Applies)
	assert.True(t, strings.Contains(harness("list"), "shuttle.book (write"), "list shows the grant")

	harness("revoke", "shuttle", "book")
	book(2)
	assert.Len(t, offered, 2, "revoked: the running server asks again")
}
