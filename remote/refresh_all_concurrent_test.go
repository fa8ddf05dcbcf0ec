package remote

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gate opens once n servers have each been reached by their reconnect.
type gate struct {
	mu      sync.Mutex
	n, seen int
	open    chan struct{}
}

func newGate(n int) *gate { return &gate{n: n, open: make(chan struct{})} }

func (g *gate) arrive() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen++; g.seen == g.n {
		close(g.open)
	}
}

// gatedServer is an MCP server with one read tool. Once armed, its first
// request waits at the gate (until the request's own end): it answers only
// when every server of the gate has been reached; with hang, it never
// answers while armed.
func gatedServer(t *testing.T, name string, g *gate, armed *atomic.Bool, hang bool) *httptest.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	rawTool(srv, &mcp.Tool{Name: "list", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("[]"), nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var once sync.Once
	release := make(chan struct{}) // the test's end: nothing waits past it
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if armed.Load() {
			once.Do(g.arrive)
			wait := g.open
			if hang {
				wait = nil
			}
			select {
			case <-wait:
			case <-r.Context().Done():
				return
			case <-release:
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) }) // runs before ts.Close
	return ts
}

// TestRefreshAllReconnectsConcurrently: four servers, the first (in the
// ids' order) hanging; the other three answer only once all four have been
// reached, which happens only if their reconnects run at once (one after
// another, the first holds the rest for its whole timeout, and the gate
// never opens). The hanging one fails on its own timeout, the others are
// unchanged, and the reports are in the ids' order.
func TestRefreshAllReconnectsConcurrently(t *testing.T) {
	require.GreaterOrEqual(t, RefreshParallel, 4)
	g := newGate(4)
	var armed atomic.Bool
	st := Store{Dir: t.TempDir()}
	ctx := context.Background()
	day := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	var ids []string
	for i, name := range []string{"alpha hang", "bravo", "charlie", "delta"} {
		ts := gatedServer(t, name, g, &armed, i == 0)
		m, err := Discover(ctx, Conn{URL: ts.URL}, day)
		require.NoError(t, err)
		require.NoError(t, st.Change(func(all map[string]*Entry) error { all[m.ID] = &Entry{Manifest: m, Added: day}; return nil }))
		ids = append(ids, m.ID)
	}
	require.Equal(t, []string{"mcp-alpha-hang", "mcp-bravo", "mcp-charlie", "mcp-delta"}, ids)
	armed.Store(true)
	const timeout = 3 * time.Second
	var calls atomic.Int32
	reps, err := st.RefreshAll(ctx, ids, func(id string, m *Manifest) Conn {
		calls.Add(1)
		assert.Equal(t, "mcp-"+strings.TrimPrefix(m.ID, "mcp-"), id)
		return Conn{URL: m.URL, Limits: Limits{Timeout: timeout}}
	}, day.Add(25*time.Hour), false, false)
	require.NoError(t, err)
	require.Len(t, reps, 4)
	assert.Equal(t, int32(4), calls.Load())
	for i, r := range reps {
		assert.Equal(t, ids[i], r.ID, "reports in the ids' order")
	}
	assert.Equal(t, "failed", reps[0].Status)
	assert.Contains(t, reps[0].Error, "did not answer within "+timeout.String())
	for _, r := range reps[1:] {
		assert.Equal(t, "unchanged", r.Status, "%s: %s", r.ID, r.Error)
	}
	all, err := st.Load()
	require.NoError(t, err)
	assert.NotEmpty(t, all["mcp-alpha-hang"].Error, "the failure is recorded")
	for _, id := range ids {
		assert.Equal(t, day.Add(25*time.Hour), all[id].Checked, "%s: every reconnect is recorded", id)
	}
}
