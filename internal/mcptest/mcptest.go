// Package mcptest serves a small real MCP server (the Go SDK's, over
// Streamable HTTP on loopback) for tests of remote plugins: a canteen with a
// read tool and a write tool, optionally behind a bearer token.
package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is a running demo server.
type Server struct {
	*httptest.Server
	MCP    *mcp.Server // add or remove tools while it runs
	mu     sync.Mutex
	orders []map[string]any
	auths  []string
}

// Orders are the arguments of every order call so far.
func (s *Server) Orders() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.orders...)
}

// Auths are the Authorization headers of every request so far.
func (s *Server) Auths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}

var object = map[string]any{"type": "object", "properties": map[string]any{
	"dish": map[string]any{"type": "string", "description": "A dish on today's menu"}}}

// Canteen serves the MCP server "Demo Canteen" (plugin id
// mcp-demo-canteen): menu is read-only and answers structured content;
// order is a write tool that records its arguments. With a token, a request
// without "Authorization: Bearer TOKEN" gets 401. more adds tools.
func Canteen(t testing.TB, token string, more ...func(*mcp.Server)) *Server {
	t.Helper()
	s := &Server{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "Demo Canteen", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "menu", Title: "Menu", Description: "Today's dishes in the demo canteen.",
		InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"dishes": []any{"牛肉面", "宫保鸡丁"}},
				Content: []mcp.Content{&mcp.TextContent{Text: `{"dishes":["牛肉面","宫保鸡丁"]}`}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "order", Title: "Order", Description: "Orders one dish.", InputSchema: object},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args)
			s.mu.Lock()
			s.orders = append(s.orders, args)
			s.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ordered":true}`}}}, nil
		})
	s.MCP = srv
	for _, f := range more {
		f(srv)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		s.mu.Lock()
		s.auths = append(s.auths, a)
		s.mu.Unlock()
		if token != "" && a != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}
