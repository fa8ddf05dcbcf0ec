package remote

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testServer is a real MCP server (the Go SDK's) over Streamable HTTP on
// loopback. It records the Authorization header of every request.
type testServer struct {
	*httptest.Server
	auth atomic.Value // string
}

func rawTool(s *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) { s.AddTool(t, h) }

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func newTestServer(t *testing.T, name string, setup func(*mcp.Server)) *testServer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.2.3"}, &mcp.ServerOptions{Instructions: "Use menu for the menu."})
	setup(srv)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := &testServer{}
	ts.auth.Store("")
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.auth.Store(r.Header.Get("Authorization"))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

var objSchema = map[string]any{"type": "object", "properties": map[string]any{"day": map[string]any{"type": "string"}}}

func canteenServer(t *testing.T) *testServer {
	return newTestServer(t, "Demo Canteen!", func(s *mcp.Server) {
		rawTool(s, &mcp.Tool{Name: "menu", Description: "Today's menu.", InputSchema: objSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{StructuredContent: map[string]any{"dishes": []any{"noodles"}},
					Content: []mcp.Content{&mcp.TextContent{Text: `{"dishes":["noodles"]}`}}}, nil
			})
		rawTool(s, &mcp.Tool{Name: "order.dish v2", Description: "Order a dish.", InputSchema: objSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult(`{"ordered": true}`), nil
			})
		rawTool(s, &mcp.Tool{Name: "hello", Description: "Says hello.", InputSchema: objSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("hello there"), nil
			})
		rawTool(s, &mcp.Tool{Name: "broken", Description: "Fails.", InputSchema: objSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "kitchen closed"}}}, nil
			})
		rawTool(s, &mcp.Tool{Name: "sneaky", Description: "Looks fine\u202e but is not.", InputSchema: objSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("x"), nil
			})
	})
}

func TestDiscoverFollowsTheReference(t *testing.T) {
	ts := canteenServer(t)
	m, err := Discover(context.Background(), Conn{URL: ts.URL}, time.Unix(0, 0))
	require.NoError(t, err)
	assert.Equal(t, "mcp-demo-canteen", m.ID)
	assert.Equal(t, "Demo Canteen!", m.ServerName)
	assert.Equal(t, "Use menu for the menu.", m.Instructions)
	var names []string
	for _, tl := range m.Tools {
		names = append(names, tl.Name)
	}
	// sorted by the server's names; "order.dish v2" is cleaned; "sneaky"
	// has a bidi override in its description and is left out.
	assert.Equal(t, []string{"broken", "hello", "menu", "order_dish_v2"}, names)
	assert.Equal(t, manifest.Read, m.Tool("menu").Effect)
	assert.Equal(t, manifest.Write, m.Tool("order_dish_v2").Effect, "no readOnlyHint: write")
	assert.Equal(t, "order.dish v2", m.Tool("order_dish_v2").Remote)
	assert.Equal(t, "mcp-demo-canteen.menu", m.ToolID(m.Tool("menu")))
	require.Len(t, m.Skipped, 1)
	assert.Contains(t, m.Skipped[0], "sneaky")
	assert.Contains(t, m.Skipped[0], "U+202E")
}

func TestCallWrapsResultsAsData(t *testing.T) {
	ts := canteenServer(t)
	ctx := context.Background()
	c := Conn{URL: ts.URL}
	d, err := Call(ctx, c, "menu", map[string]any{"day": "mon"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"dishes": []any{"noodles"}}, d, "structuredContent first")
	d, err = Call(ctx, c, "order.dish v2", nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"ordered": true}, d, "else the text parsed as JSON")
	d, err = Call(ctx, c, "hello", nil)
	require.NoError(t, err)
	assert.Equal(t, "hello there", d, "else the text")
	_, err = Call(ctx, c, "broken", nil)
	var te *ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "kitchen closed", te.Message)
}

func TestTokenGoesToTheServerOnlyAndNeverIntoErrors(t *testing.T) {
	const token = "tok-3f9a1c7e5b2d4a6f8e0c"
	ts := canteenServer(t)
	_, err := Discover(context.Background(), Conn{URL: ts.URL, Token: token}, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "Bearer "+token, ts.auth.Load())

	// A server that fails echoes the Authorization header into its answer.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad auth: "+r.Header.Get("Authorization"), http.StatusInternalServerError)
	}))
	defer echo.Close()
	_, err = Discover(context.Background(), Conn{URL: echo.URL, Token: token}, time.Now())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), token)
}

func TestMisbehavingServersCostOneCall(t *testing.T) {
	ctx := context.Background()
	t.Run("huge", func(t *testing.T) {
		ts := newTestServer(t, "huge", func(s *mcp.Server) {
			rawTool(s, &mcp.Tool{Name: "big", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return textResult(strings.Repeat("x", 3<<20)), nil
				})
		})
		_, err := Call(ctx, Conn{URL: ts.URL, Limits: Limits{MaxBytes: 1 << 20}}, "big", nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "more than 1048576 bytes")
	})
	t.Run("slow", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		ts := newTestServer(t, "slow", func(s *mcp.Server) {
			rawTool(s, &mcp.Tool{Name: "wait", InputSchema: objSchema},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					select {
					case <-release:
					case <-ctx.Done():
					}
					return textResult("late"), nil
				})
		})
		start := time.Now()
		_, err := Call(ctx, Conn{URL: ts.URL, Limits: Limits{Timeout: 300 * time.Millisecond}}, "wait", nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "did not answer within 300ms")
		assert.Less(t, time.Since(start), 5*time.Second)
	})
	t.Run("not MCP", func(t *testing.T) {
		html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>hello</html>"))
		}))
		defer html.Close()
		_, err := Discover(ctx, Conn{URL: html.URL, Limits: Limits{Timeout: 5 * time.Second}}, time.Now())
		require.Error(t, err)
	})
	t.Run("redirect", func(t *testing.T) {
		red := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusTemporaryRedirect)
		}))
		defer red.Close()
		_, err := Discover(ctx, Conn{URL: red.URL, Token: "tok-aaaaaaaaaaaaaaaaaaaa"}, time.Now())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "redirect")
	})
}

func TestToolChecks(t *testing.T) {
	long := strings.Repeat("n", 60)
	ts := newTestServer(t, "checks", func(s *mcp.Server) {
		h := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("{}"), nil
		}
		rawTool(s, &mcp.Tool{Name: long, InputSchema: objSchema}, h)
		rawTool(s, &mcp.Tool{Name: "arr", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"a\u200bb": map[string]any{"type": "string"}}}}, h)
		rawTool(s, &mcp.Tool{Name: "ref", InputSchema: map[string]any{"type": "object", "$ref": "https://example.com/s.json"}}, h)
		rawTool(s, &mcp.Tool{Name: "del", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}}, h)
		rawTool(s, &mcp.Tool{Name: "ro", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}}, h)
	})
	m, err := Discover(context.Background(), Conn{URL: ts.URL}, time.Now())
	require.NoError(t, err)
	require.NotNil(t, m.Tool(long[:40]), "names are cut to 40 characters")
	assert.Nil(t, m.Tool("arr"), "a schema key with a zero-width space")
	assert.Nil(t, m.Tool("ref"), "a schema that refers outside itself")
	assert.True(t, m.Tool("del").Destructive)
	assert.False(t, m.Tool("ro").Destructive, "a read tool is never destructive")
	assert.True(t, m.Tool("ro").Idempotent)
	assert.True(t, m.Tool("ro").ClosedWorld)
	assert.Len(t, m.Skipped, 2)
}

func ptr[T any](v T) *T { return &v }

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"Demo Canteen": "mcp-demo-canteen", "demo-canteen": "mcp-demo-canteen", "  --A__b--  ": "mcp-a-b",
		"食堂 menu": "mcp-menu", strings.Repeat("abc", 30): "mcp-" + strings.Repeat("abc", 12),
	} {
		got, err := PluginID(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		assert.LessOrEqual(t, len(got), MaxIDLen)
	}
	_, err := PluginID("食堂")
	assert.Error(t, err)
	assert.Equal(t, "get_menu_", CleanToolName("get.menu!"))
	assert.Equal(t, "a_b-C_9", CleanToolName("a b-C_9"))
	assert.Equal(t, "__", CleanToolName("食堂"))
	assert.Len(t, CleanToolName(strings.Repeat("x", 100)), 40)
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{"https://mcp.example.com/mcp", "http://127.0.0.1:8080/mcp", "http://[::1]:9/x", "http://localhost:1/"} {
		_, err := CheckURL(ok)
		assert.NoError(t, err, ok)
	}
	for _, bad := range []string{"http://mcp.example.com/mcp", "ftp://x.example.com", "https://user:pw@x.example.com/",
		"https://portal.pku.edu.cn/mcp", "https://PKU.EDU.CN./x", "https://10.0.0.1/mcp", "https://169.254.169.254/",
		"https://x.example.com/#frag", "https:///nohost"} {
		_, err := CheckURL(bad)
		assert.Error(t, err, bad)
	}
}

func TestDiff(t *testing.T) {
	base := &Manifest{ID: "mcp-x", Tools: []Tool{{Name: "a", Effect: manifest.Read, Description: "d"}, {Name: "b", Effect: manifest.Write}}}
	clone := func(f func(m *Manifest)) *Manifest {
		b, _ := json.Marshal(base)
		var m Manifest
		json.Unmarshal(b, &m)
		f(&m)
		return &m
	}
	_, wider, err := Diff(base, clone(func(m *Manifest) {}))
	require.NoError(t, err)
	assert.False(t, wider)
	ch, wider, _ := Diff(base, clone(func(m *Manifest) { m.Tools = append(m.Tools, Tool{Name: "c", Effect: manifest.Write}) }))
	assert.True(t, wider, "a new write tool is wider")
	assert.Equal(t, []Change{{Tool: "c", What: "new write tool", Wider: true}}, ch)
	_, wider, _ = Diff(base, clone(func(m *Manifest) { m.Tools = append(m.Tools, Tool{Name: "c", Effect: manifest.Read}) }))
	assert.False(t, wider, "a new read tool is not")
	_, wider, _ = Diff(base, clone(func(m *Manifest) { m.Tools[0].Effect = manifest.Write }))
	assert.True(t, wider, "read became write")
	ch, wider, _ = Diff(base, clone(func(m *Manifest) { m.Tools = m.Tools[:1]; m.Tools[0].Description = "e" }))
	assert.False(t, wider)
	assert.Len(t, ch, 2)
	_, _, err = Diff(base, clone(func(m *Manifest) { m.ID = "mcp-y" }))
	assert.Error(t, err)
}

func TestStoreRoundTrip(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	m, err := s.Load()
	require.NoError(t, err)
	assert.Empty(t, m)
	e := &Entry{Manifest: &Manifest{ID: "mcp-x", URL: "https://x.example.com/mcp"}}
	require.NoError(t, s.Change(func(m map[string]*Entry) error { m["mcp-x"] = e; return nil }))
	got, err := s.Load()
	require.NoError(t, err)
	assert.Equal(t, "https://x.example.com/mcp", got["mcp-x"].Manifest.URL)
	ids, _ := s.IDs()
	assert.Equal(t, []string{"mcp-x"}, ids)
}

func TestAServerEchoingItsTokenDoesNotPrintIt(t *testing.T) {
	const token = "tok-echo-0123456789abcdef"
	ts := newTestServer(t, "echo", func(s *mcp.Server) {
		rawTool(s, &mcp.Tool{Name: "whoami", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				a := req.Extra.Header.Get("Authorization")
				return &mcp.CallToolResult{StructuredContent: map[string]any{"auth": a, a: []any{a}}}, nil
			})
		rawTool(s, &mcp.Tool{Name: "fail", InputSchema: objSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no: " + req.Extra.Header.Get("Authorization")}}}, nil
			})
	})
	c := Conn{URL: ts.URL, Token: token}
	d, err := Call(context.Background(), c, "whoami", nil)
	require.NoError(t, err)
	b, _ := json.Marshal(d)
	assert.NotContains(t, string(b), token)
	assert.Contains(t, string(b), "Bearer [redacted]")
	_, err = Call(context.Background(), c, "fail", nil)
	require.Error(t, err)
	assert.Equal(t, "no: Bearer [redacted]", err.Error())
	d, err = Call(context.Background(), Conn{URL: ts.URL}, "whoami", nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"auth": "", "": []any{""}}, d, "no token: nothing replaced")
}

func TestRefreshHoldsAWiderToolListAndAcceptApplies(t *testing.T) {
	ts := newTestServer(t, "grow", func(s *mcp.Server) {
		rawTool(s, &mcp.Tool{Name: "list", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("[]"), nil
			})
	})
	st := Store{Dir: t.TempDir()}
	ctx := context.Background()
	day := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	m, err := Discover(ctx, Conn{URL: ts.URL}, day)
	require.NoError(t, err)
	require.NoError(t, st.Change(func(all map[string]*Entry) error { all[m.ID] = &Entry{Manifest: m, Added: day}; return nil }))
	conn := func(m *Manifest) Conn { return Conn{URL: m.URL} }

	rep, err := st.Refresh(ctx, m.ID, conn, day, false, false)
	require.NoError(t, err)
	assert.Equal(t, "unchanged", rep.Status)
	rep, err = st.Refresh(ctx, m.ID, conn, day.Add(time.Hour), false, false)
	require.NoError(t, err)
	assert.Equal(t, "skipped", rep.Status, "at most once a day")

	// The server gains a write tool: wider, held.
	srv2 := newTestServer(t, "grow", func(s *mcp.Server) {
		rawTool(s, &mcp.Tool{Name: "list", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("[]"), nil
			})
		rawTool(s, &mcp.Tool{Name: "wipe", InputSchema: objSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("{}"), nil
			})
	})
	conn2 := func(m *Manifest) Conn { return Conn{URL: srv2.URL} }
	rep, err = st.Refresh(ctx, m.ID, conn2, day.Add(25*time.Hour), false, true)
	require.NoError(t, err)
	assert.Equal(t, "pending", rep.Status, "--check reports")
	all, _ := st.Load()
	assert.Nil(t, all[m.ID].Pending, "--check writes nothing")
	rep, err = st.Refresh(ctx, m.ID, conn2, day.Add(25*time.Hour), false, false)
	require.NoError(t, err)
	assert.Equal(t, "pending", rep.Status)
	assert.Equal(t, []Change{{Tool: "wipe", What: "new write tool", Wider: true}}, rep.Changes)
	all, _ = st.Load()
	assert.Nil(t, all[m.ID].Manifest.Tool("wipe"), "the cached tools stay until accepted")
	require.NotNil(t, all[m.ID].Pending)

	_, err = st.Accept(m.ID, time.Time{})
	assert.Error(t, err, "a pending list other than the one shown is not applied")
	got, err := st.Accept(m.ID, all[m.ID].Pending.Listed)
	require.NoError(t, err)
	assert.NotNil(t, got.Tool("wipe"))
	_, err = st.Accept(m.ID, got.Listed)
	assert.Error(t, err, "nothing pending")

	// A server that is down: recorded, the cached tools kept.
	srv2.Close()
	rep, err = st.Refresh(ctx, m.ID, conn2, day.Add(50*time.Hour), false, false)
	require.NoError(t, err)
	assert.Equal(t, "failed", rep.Status)
	all, _ = st.Load()
	assert.NotEmpty(t, all[m.ID].Error)
	assert.NotNil(t, all[m.ID].Manifest.Tool("wipe"))
}

func TestNewHTTPClientDialsOnlyWhatTheRulesAllow(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer ts.Close()
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	pub, _ := CheckURL("https://mcp.example.com/mcp")
	// A public URL's client refuses loopback at the dial decision: no
	// packet is sent.
	_, err := NewHTTPClient(pub, nil).Get(ts.URL)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "127.0.0.1")
	// A mapping the user gave is dialled as given (here: loopback).
	c := NewHTTPClient(pub, map[string]string{"mcp.example.com:" + port: "127.0.0.1:" + port})
	resp, err := c.Get("http://mcp.example.com:" + port + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	// A loopback URL's client reaches loopback.
	loop, _ := CheckURL(ts.URL)
	resp, err = NewHTTPClient(loop, nil).Get(ts.URL)
	require.NoError(t, err)
	resp.Body.Close()
}
