package registry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawStdio is a server on the stdio transport driven line by line.
type rawStdio struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]any
	done  chan error
}

func startRawStdio(t *testing.T, r *registry.Registry, o registry.StdioOptions) *rawStdio {
	t.Helper()
	srv, err := r.MCPServer(registry.MCPOptions{})
	require.NoError(t, err)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &rawStdio{t: t, in: inW, lines: make(chan map[string]any, 100), done: make(chan error, 1)}
	go func() {
		s.done <- srv.Run(context.Background(), registry.NewStdioTransport(inR, outW, o))
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			s.lines <- m
		}
		close(s.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

func (s *rawStdio) send(line string) {
	s.t.Helper()
	_, err := io.WriteString(s.in, line+"\n")
	require.NoError(s.t, err)
}

func (s *rawStdio) recv() map[string]any {
	s.t.Helper()
	select {
	case m, ok := <-s.lines:
		require.True(s.t, ok, "the server closed its output")
		return m
	case <-time.After(10 * time.Second):
		s.t.Fatal("no answer")
	}
	return nil
}

// code is an answer's error code, 0 when it has none.
func code(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

const initLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestStdioMalformedFramesKeepTheSession(t *testing.T) {
	s := startRawStdio(t, mcpRegistry(t), registry.StdioOptions{MaxLine: 1024})
	s.send(initLine)
	require.Contains(t, s.recv(), "result")
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	cases := []struct {
		name, line string
		code       float64
		id         any
	}{
		{"not JSON", `hello`, -32700, nil},
		{"cut JSON", `{"jsonrpc":"2.0","id":1,`, -32700, nil},
		{"empty array", `[]`, -32600, nil},
		{"empty object", `{}`, -32600, nil},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, nil},
		{"a string", `"ping"`, -32600, nil},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":2,"method":"ping"}`, -32600, 2.0},
		{"no jsonrpc", `{"id":3,"method":"ping"}`, -32600, 3.0},
		{"jsonrpc case", `{"JSONRPC":"2.0","id":4,"method":"ping"}`, -32600, 4.0},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, nil},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, nil},
		{"method not a string", `{"jsonrpc":"2.0","id":5,"method":5}`, -32600, 5.0},
		{"result and method", `{"jsonrpc":"2.0","id":6,"method":"ping","result":{}}`, -32600, 6.0},
		{"params not an object", `{"jsonrpc":"2.0","id":7,"method":"ping","params":[1]}`, -32602, 7.0},
		{"over-long line", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`, -32600, nil},
		{"unknown method", `{"jsonrpc":"2.0","id":9,"method":"nope/nope"}`, -32601, 9.0},
	}
	for i, c := range cases {
		s.send(c.line)
		m := s.recv()
		assert.Equal(t, c.code, code(m), "%s: %v", c.name, m)
		assert.Equal(t, c.id, m["id"], c.name)
		assert.Equal(t, "2.0", m["jsonrpc"], c.name)
		// the session goes on
		id := 100 + i
		s.send(`{"jsonrpc":"2.0","id":` + jsonNum(id) + `,"method":"ping"}`)
		m = s.recv()
		assert.Equal(t, float64(id), m["id"], c.name)
		assert.Contains(t, m, "result", c.name)
	}

	// whitespace around a message is JSON's own: answered as the message
	s.send(`{"jsonrpc":"2.0","id":"ws","method":"ping"} ` + "\r")
	m := s.recv()
	assert.Equal(t, "ws", m["id"])
	assert.Contains(t, m, "result")
	// a blank line is no message
	s.send("")
	s.send(`{"jsonrpc":"2.0","id":"after","method":"tools/list"}`)
	m = s.recv()
	assert.Equal(t, "after", m["id"])
	assert.Contains(t, m, "result")

	s.in.Close()
	select {
	case err := <-s.done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end at the end of input")
	}
}

func jsonNum(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestStdioInitializeOrder(t *testing.T) {
	s := startRawStdio(t, mcpRegistry(t), registry.StdioOptions{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	m := s.recv()
	assert.Equal(t, -32600.0, code(m), m)
	assert.Contains(t, m["error"].(map[string]any)["message"], "before initialize")
	s.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	assert.Contains(t, s.recv(), "result", "ping is allowed before initialize")
	s.send(initLine)
	m = s.recv()
	require.Contains(t, m, "result")
	caps := m["result"].(map[string]any)["capabilities"].(map[string]any)
	assert.Equal(t, true, caps["tools"].(map[string]any)["listChanged"])
	s.send(strings.Replace(initLine, `"init"`, `"again"`, 1))
	m = s.recv()
	assert.Equal(t, "again", m["id"])
	assert.Equal(t, -32600.0, code(m), m)
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	m = s.recv()
	assert.Equal(t, 3.0, m["id"])
	assert.Contains(t, m, "result")
	// a tool call's failure inside the SDK has a code too
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}`)
	m = s.recv()
	assert.NotZero(t, code(m), m)
}

// TestStdioAnswersEverythingBeforeEOF: what is read before the end of input
// is answered before the server ends (5 runs of 5).
func TestStdioAnswersEverythingBeforeEOF(t *testing.T) {
	r := mcpRegistry(t)
	input := strings.Join([]string{
		initLine,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"off__read","arguments":{"q":"hi"}}}`,
	}, "\n") + "\n"
	for run := 0; run < 5; run++ {
		srv, err := r.MCPServer(registry.MCPOptions{})
		require.NoError(t, err)
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() {
			done <- srv.Run(context.Background(), registry.NewStdioTransport(strings.NewReader(input), &out, registry.StdioOptions{}))
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the server did not end")
		}
		ids := map[any]bool{}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m), l)
			assert.Contains(t, m, "result", l)
			ids[m["id"]] = true
		}
		assert.Equal(t, map[any]bool{"init": true, 2.0: true, 3.0: true, 4.0: true}, ids, "run %d: %s", run, out.String())
	}
}

// slowRegistry has a read tool "slow__wait" that blocks until its context
// ends or release is closed; started receives one value per call.
func slowRegistry(t *testing.T) (r *registry.Registry, started chan struct{}, release chan struct{}) {
	started, release = make(chan struct{}, 16), make(chan struct{})
	r = registry.New(registry.WithCompiler(func(p *manifest.Plugin) (registry.Runner, error) {
		return registry.RunnerFunc(func(ctx context.Context, req registry.RunRequest) (any, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
				return map[string]any{"done": true}, nil
			}
		}), nil
	}))
	mustAdd(t, r, docFiles("slow", "", map[string]string{"wait": toolYAML("read")}), registry.Official, registry.DocOptions{})
	return r, started, release
}

func TestStdioCancelledRequestIsNotAnswered(t *testing.T) {
	r, started, _ := slowRegistry(t)
	s := startRawStdio(t, r, registry.StdioOptions{})
	s.send(initLine)
	require.Contains(t, s.recv(), "result")
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow__wait","arguments":{}}}`)
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool did not start")
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	s.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	m := s.recv()
	assert.Equal(t, 8.0, m["id"], "the first answer is the ping's, not the cancelled call's")
	s.in.Close()
	for m := range s.lines {
		assert.NotEqual(t, 7.0, m["id"], "a cancelled request is not answered: %v", m)
	}
	assert.NoError(t, <-s.done)
}

func TestStdioBoundsPendingRequests(t *testing.T) {
	r, started, release := slowRegistry(t)
	s := startRawStdio(t, r, registry.StdioOptions{MaxPending: 2})
	s.send(initLine)
	require.Contains(t, s.recv(), "result")
	call := func(id int) {
		s.send(`{"jsonrpc":"2.0","id":` + jsonNum(id) + `,"method":"tools/call","params":{"name":"slow__wait","arguments":{}}}`)
	}
	call(10)
	call(11)
	<-started
	<-started
	call(12)
	m := s.recv()
	assert.Equal(t, 12.0, m["id"])
	assert.Equal(t, float64(registry.CodeBusy), code(m), m)
	s.send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	m = s.recv()
	assert.Equal(t, 10.0, m["id"])
	assert.Equal(t, -32600.0, code(m), "an id in use is refused: %v", m)
	close(release)
	got := map[any]bool{}
	for i := 0; i < 2; i++ {
		m := s.recv()
		assert.Contains(t, m, "result")
		got[m["id"]] = true
	}
	assert.Equal(t, map[any]bool{10.0: true, 11.0: true}, got)
}

// TestStdioDrainIsBounded: a call that never ends does not keep the server
// alive past the drain bound after the end of input.
func TestStdioDrainIsBounded(t *testing.T) {
	r, started, _ := slowRegistry(t)
	s := startRawStdio(t, r, registry.StdioOptions{Drain: 200 * time.Millisecond})
	s.send(initLine)
	require.Contains(t, s.recv(), "result")
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow__wait","arguments":{}}}`)
	<-started
	t0 := time.Now()
	s.in.Close()
	select {
	case <-s.done:
		assert.Less(t, time.Since(t0), 5*time.Second)
	case <-time.After(10 * time.Second):
		t.Fatal("the server waited for a call that never ends")
	}
}

// TestStdioWithTheSDKClient: the SDK's own client works over the transport.
func TestStdioWithTheSDKClient(t *testing.T) {
	srv, err := mcpRegistry(t).MCPServer(registry.MCPOptions{})
	require.NoError(t, err)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(context.Background(), registry.NewStdioTransport(inR, outW, registry.StdioOptions{}))
		outW.Close()
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, list.Tools, 4)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "off__read", Arguments: map[string]any{"q": "x"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
	assert.Equal(t, false, res.Meta["pku-harness/untrusted"])
	require.NoError(t, cs.Close())
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end")
	}
}
