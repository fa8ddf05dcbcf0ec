package registry_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveHTTP serves svc on a loopback port and returns its MCP URL.
func serveHTTP(t *testing.T, svc *registry.MCPService, o registry.HTTPOptions) (string, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: svc.HTTPHandler(o), ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return "http://" + ln.Addr().String() + "/mcp", port
}

type bearer struct{ token string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}

func httpClient(t *testing.T, url, token string, copts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer{token}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, copts).Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestMCPHTTPSessionsAreIsolated: over Streamable HTTP, one session's
// taint is its own.
func TestMCPHTTPSessionsAreIsolated(t *testing.T) {
	svc, err := mcpRegistry(t).MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	url, _ := serveHTTP(t, svc, registry.HTTPOptions{})
	ctx := context.Background()
	a, err := httpClient(t, url, "", nil)
	require.NoError(t, err)
	b, err := httpClient(t, url, "", nil)
	require.NoError(t, err)
	require.NotEqual(t, a.ID(), b.ID())

	list, err := a.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, list.Tools, 4)

	// a reads untrusted data: its official write now asks (and a cannot
	// be asked); b's does not
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "com__read", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(t, res))
	assert.Equal(t, true, res.Meta["pku-harness/untrusted"])
	res, err = a.CallTool(ctx, &mcp.CallToolParams{Name: "off__write", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "this session read untrusted data")
	res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "off__write", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
}

// TestMCPHTTPElicitation: a client with elicitation approves an ask over
// HTTP (the SDK's own multi-round-trip handling).
func TestMCPHTTPElicitation(t *testing.T) {
	svc, err := mcpRegistry(t).MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	url, _ := serveHTTP(t, svc, registry.HTTPOptions{})
	asked := 0
	cs, err := httpClient(t, url, "", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
	require.NoError(t, err)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "com__write", Arguments: map[string]any{"q": "y"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
	assert.Equal(t, 1, asked)
}

// TestMCPHTTPRefusesOtherOrigins: DNS rebinding and cross-origin pages are
// refused before the MCP handler sees the request. Every request goes to
// the loopback listener; only the headers name other hosts.
func TestMCPHTTPRefusesOtherOrigins(t *testing.T) {
	svc, err := mcpRegistry(t).MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	url, port := serveHTTP(t, svc, registry.HTTPOptions{})
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(host, origin string) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusForbidden, post("evil.example:"+port, ""), "a rebound name")
	assert.Equal(t, http.StatusForbidden, post("127.0.0.1:1", ""), "another port")
	assert.Equal(t, http.StatusForbidden, post("", "http://evil.example"), "a page of another origin")
	assert.Equal(t, http.StatusForbidden, post("", "null"), "an opaque origin")
	assert.Equal(t, http.StatusForbidden, post("", "https://127.0.0.1:"+port), "another scheme")
	assert.Equal(t, http.StatusOK, post("", "http://127.0.0.1:"+port), "its own origin")
	assert.Equal(t, http.StatusOK, post("localhost:"+port, "http://localhost:"+port))
	assert.Equal(t, http.StatusOK, post("", ""), "a client that sends no Origin")
}

func TestMCPHTTPBearerToken(t *testing.T) {
	svc, err := mcpRegistry(t).MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	url, _ := serveHTTP(t, svc, registry.HTTPOptions{Token: "s3cr3t-token"})
	_, err = httpClient(t, url, "", nil)
	require.Error(t, err, "no token")
	_, err = httpClient(t, url, "wrong", nil)
	require.Error(t, err, "a wrong token")
	cs, err := httpClient(t, url, "s3cr3t-token", nil)
	require.NoError(t, err)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "off__read", Arguments: map[string]any{"q": "a"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
}

func TestMCPHTTPBoundsSessions(t *testing.T) {
	svc, err := mcpRegistry(t).MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	url, _ := serveHTTP(t, svc, registry.HTTPOptions{MaxSessions: 1})
	a, err := httpClient(t, url, "", nil)
	require.NoError(t, err)
	_, err = httpClient(t, url, "", nil)
	require.Error(t, err, "a second session is refused")
	assert.Contains(t, err.Error(), "Service Unavailable")
	require.NoError(t, a.Close())
	require.Eventually(t, func() bool {
		_, err := httpClient(t, url, "", nil)
		return err == nil
	}, 5*time.Second, 50*time.Millisecond, "a closed session frees its place")
}

// TestMCPHTTPBoundsConcurrentInitializes: initializes racing for the last
// places cannot open more sessions than the bound.
func TestMCPHTTPBoundsConcurrentInitializes(t *testing.T) {
	svc, err := mcpRegistry(t).MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	url, _ := serveHTTP(t, svc, registry.HTTPOptions{MaxSessions: 3})
	var wg sync.WaitGroup
	var mu sync.Mutex
	opened, refused := 0, 0
	for range 10 {
		wg.Go(func() {
			_, err := httpClient(t, url, "", nil)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				opened++
			} else if strings.Contains(err.Error(), "Service Unavailable") {
				refused++
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 3, opened)
	assert.Equal(t, 7, refused)
}

// TestMCPHTTPListChanged: a refresh reaches an HTTP session too.
func TestMCPHTTPListChanged(t *testing.T) {
	r := mcpRegistry(t)
	svc, err := r.MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	url, _ := serveHTTP(t, svc, registry.HTTPOptions{})
	changed := make(chan struct{}, 4)
	cs, err := httpClient(t, url, "", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	require.NoError(t, err)
	// open the server-to-client stream by making a request first
	_, err = cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	r2 := mcpRegistry(t)
	mustAdd(t, r2, docFiles("extra", "", map[string]string{"read": toolYAML("read")}), registry.Official, registry.DocOptions{})
	require.NoError(t, svc.Refresh(r2))
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed over HTTP")
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "extra__read", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
}

func TestIsLoopbackHost(t *testing.T) {
	for h, want := range map[string]bool{"127.0.0.1": true, "::1": true, "[::1]": true, "localhost": true, "LOCALHOST": true,
		"127.1.2.3": true, "0.0.0.0": false, "10.0.0.1": false, "example.com": false, "": false} {
		assert.Equal(t, want, registry.IsLoopbackHost(h), h)
	}
}
