package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/proxy"
)

// Conn says how to reach a remote plugin's server.
type Conn struct {
	URL   string // the Streamable HTTP endpoint, checked by CheckURL
	Token string // a bearer token, sent to URL's origin only; empty for none
	// HTTP sends the requests; nil is a client that follows the web rules
	// (NewHTTPClient). A test or a host with its own guard passes its own.
	HTTP   *http.Client
	Limits Limits
	// Resolve maps HOST:PORT to the address to dial instead (--resolve).
	Resolve map[string]string
}

// Limits bound what one connection to a server may cost.
type Limits struct {
	Timeout  time.Duration // a whole discovery or call; 0 is 30 s
	MaxBytes int64         // bytes read from the server in one connection; 0 is 4 MiB
}

func (l Limits) timeout() time.Duration {
	if l.Timeout <= 0 {
		return 30 * time.Second
	}
	return l.Timeout
}

func (l Limits) maxBytes() int64 {
	if l.MaxBytes <= 0 {
		return 4 << 20
	}
	return l.MaxBytes
}

// closeWait is how long a call waits for the server to take the session's
// end.
const closeWait = 500 * time.Millisecond

// client is what the engine tells a server it is.
var client = &mcp.Implementation{Name: "pku-harness", Version: "1"}

// session connects, initialises and hands the session to fn; the connection
// is closed after fn returns, whatever happens.
func (c Conn) session(ctx context.Context, fn func(context.Context, *mcp.ClientSession) error) error {
	u, err := CheckURL(c.URL)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Limits.timeout())
	defer cancel()
	base := c.HTTP
	if base == nil {
		base = NewHTTPClient(u, c.Resolve)
	}
	budget := &byteBudget{}
	budget.left.Store(c.Limits.maxBytes())
	hc := &http.Client{
		Transport: &authTransport{base: transportOf(base), origin: originOf(u), token: c.Token, budget: budget},
		Timeout:   c.Limits.timeout(),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("the server answered with a redirect: a remote plugin's URL must be its endpoint")
		},
	}
	t := &mcp.StreamableClientTransport{Endpoint: u.String(), HTTPClient: hc, MaxRetries: -1,
		DisableStandaloneSSE: true, MaxEventSize: int(min(c.Limits.maxBytes(), 1<<30))}
	cs, err := mcp.NewClient(client, nil).Connect(ctx, t, nil)
	if err != nil {
		return c.fail(ctx, budget, "connect", err)
	}
	err = fn(ctx, cs)
	// Closing tells the server the session ended; a server that holds that
	// answer must not hold the call, so it is waited for a moment at most,
	// and not at all once the call's time is up (every request is bounded
	// by the client's timeout).
	closed := make(chan struct{})
	go func() { cs.Close(); close(closed) }()
	if ctx.Err() == nil {
		select {
		case <-closed:
		case <-time.After(closeWait):
		case <-ctx.Done():
		}
	}
	if err != nil {
		return c.fail(ctx, budget, "", err)
	}
	return nil
}

// fail words an error of a connection; the token never appears in it.
func (c Conn) fail(ctx context.Context, b *byteBudget, what string, err error) error {
	var te *ToolError
	if errors.As(err, &te) {
		return te
	}
	switch {
	case b.exceeded():
		err = fmt.Errorf("the server sent more than %d bytes", c.Limits.maxBytes())
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("the server did not answer within %v", c.Limits.timeout())
	}
	msg := newHider(c.Token).str(err.Error())
	if what != "" {
		return fmt.Errorf("%s %s: %s", what, c.URL, cut(msg, 500))
	}
	return fmt.Errorf("%s: %s", c.URL, cut(msg, 500))
}

// Discover connects, lists the server's tools and makes the manifest.
func Discover(ctx context.Context, c Conn, now time.Time) (*Manifest, error) {
	var m *Manifest
	err := c.session(ctx, func(ctx context.Context, cs *mcp.ClientSession) error {
		tools, err := listTools(ctx, cs)
		if err != nil {
			return err
		}
		init, tools := scrubListing(cs.InitializeResult(), tools, newHider(c.Token))
		m, err = build(c.URL, init, tools, now)
		if m != nil {
			m.Resolve = c.Resolve
		}
		return err
	})
	return m, err
}

// listTools reads the server's whole tool list, within bounds.
func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	var cursor string
	for page := 0; ; page++ {
		if page >= 32 {
			return nil, fmt.Errorf("the server's tool list has more than 32 pages")
		}
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		tools = append(tools, res.Tools...)
		if len(tools) > 4*MaxTools {
			return nil, fmt.Errorf("the server lists more than %d tools", 4*MaxTools)
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			return tools, nil
		}
		cursor = res.NextCursor
	}
}

// CallTool calls a reviewed tool t, as Call does, after listing the server's
// tools again in the same session: a tool the server no longer lists, or now
// lists with wider access than was reviewed (a read that became a write, a
// tool that became destructive or open-world, one that now breaks a rule),
// is not called: its cached rules no longer describe it, and the wider
// listing waits for harness update and accept, as every wider one does.
func CallTool(ctx context.Context, c Conn, t *Tool, args map[string]any) (any, error) {
	return call(ctx, c, t.Remote, args, func(ctx context.Context, cs *mcp.ClientSession) error {
		tools, err := listTools(ctx, cs)
		if err != nil {
			return err
		}
		_, tools = scrubListing(nil, tools, newHider(c.Token))
		var found []*mcp.Tool
		for _, lt := range tools {
			if lt != nil && lt.Name == t.Remote {
				found = append(found, lt)
			}
		}
		if len(found) > 1 {
			return fmt.Errorf("the server now lists %q more than once; not called: run harness update --force", cut(t.Remote, 60))
		}
		for _, lt := range found {
			live, why := checkTool(lt)
			switch {
			case why != "":
				return fmt.Errorf("the server's tool %q now breaks a rule (%s); not called: run harness update --force", cut(t.Remote, 60), why)
			case live.Effect.Rank() > t.Effect.Rank():
				return fmt.Errorf("the server now marks %q as a %s tool (reviewed as %s); not called: run harness update --force, then harness accept to review it", cut(t.Remote, 60), live.Effect, t.Effect)
			case live.Destructive && !t.Destructive:
				return fmt.Errorf("the server now marks %q as destructive (reviewed as not); not called: run harness update --force, then harness accept to review it", cut(t.Remote, 60))
			case t.ClosedWorld && !live.ClosedWorld:
				return fmt.Errorf("the server no longer marks %q as closed-world (reviewed as closed); not called: run harness update --force, then harness accept to review it", cut(t.Remote, 60))
			}
			return nil
		}
		return fmt.Errorf("the server no longer lists the tool %q; not called: run harness update --force", cut(t.Remote, 60))
	})
}

// Call calls one tool by the server's name for it and returns its data: the
// structured content, else the text parsed as JSON, else the text. A result
// the server marks as an error is an error carrying its text.
func Call(ctx context.Context, c Conn, remoteName string, args map[string]any) (any, error) {
	return call(ctx, c, remoteName, args, nil)
}

// call calls one tool after check, when there is one, allows it.
func call(ctx context.Context, c Conn, remoteName string, args map[string]any, check func(context.Context, *mcp.ClientSession) error) (any, error) {
	var data any
	err := c.session(ctx, func(ctx context.Context, cs *mcp.ClientSession) error {
		if check != nil {
			if err := check(ctx, cs); err != nil {
				return err
			}
		}
		if args == nil {
			args = map[string]any{}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: remoteName, Arguments: args})
		if err != nil {
			return err
		}
		d, text := resultData(res)
		h := newHider(c.Token)
		if res.IsError {
			if text == "" {
				text = "the tool failed and said nothing"
			}
			return &ToolError{Message: cut(h.str(text), 2000)}
		}
		data = scrub(d, h)
		return nil
	})
	return data, err
}

// hider replaces a plugin's token in text wherever it stands whole, raw
// or in any encoding the proxy's redactor finds a credential in (URL
// escapes, base64 of the Authorization header, hex, letter case, ...;
// proxy.Finder): a server that shows the token it was sent in a download
// link's "?access_token=" or a debug answer's base64 would otherwise hand
// it to the model, a line of jq away.
type hider struct {
	token string
	f     *proxy.Finder
}

func newHider(token string) *hider {
	if token == "" {
		return &hider{}
	}
	return &hider{token: token, f: proxy.NewFinder(token, "Bearer "+token)}
}

func (h *hider) str(s string) string {
	if h.token == "" {
		return s
	}
	s = strings.ReplaceAll(s, h.token, proxy.Marker) // a token shorter than the Finder takes
	return h.f.Redact(s)
}

// scrub replaces the plugin's own token wherever the server echoed it in a
// result, in strings and in keys: the token is the user's, not the model's.
func scrub(v any, h *hider) any {
	if h.token == "" {
		return v
	}
	switch x := v.(type) {
	case string:
		return h.str(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = scrub(e, h)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[h.str(k)] = scrub(e, h)
		}
		return out
	}
	return v
}

// scrubListing replaces the plugin's token wherever the server echoed it in
// its initialize answer or its tool list, before anything of them is kept:
// the manifest is stored in remote.json, printed on the review sheet and
// served to the model, and the plugin id is made from the server's name.
func scrubListing(init *mcp.InitializeResult, tools []*mcp.Tool, h *hider) (*mcp.InitializeResult, []*mcp.Tool) {
	if h.token == "" {
		return init, tools
	}
	str := h.str
	if init != nil {
		in := *init
		in.Instructions = str(in.Instructions)
		if si := in.ServerInfo; si != nil {
			c := *si
			c.Name, c.Title, c.Version = str(c.Name), str(c.Title), str(c.Version)
			in.ServerInfo = &c
		}
		init = &in
	}
	out := make([]*mcp.Tool, len(tools))
	for i, t := range tools {
		if t == nil {
			continue
		}
		c := *t
		c.Name, c.Title, c.Description = str(c.Name), str(c.Title), str(c.Description)
		if a := c.Annotations; a != nil {
			ac := *a
			ac.Title = str(ac.Title)
			c.Annotations = &ac
		}
		c.InputSchema = scrub(jsonAny(c.InputSchema), h)
		c.OutputSchema = scrub(jsonAny(c.OutputSchema), h)
		out[i] = &c
	}
	return init, out
}

// jsonAny is v as decoded JSON (maps, slices, strings...), so that scrub
// reaches every string of it; a value that is not JSON stays as it is.
func jsonAny(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// ToolError is a tool's own failure, in the server's words (untrusted).
type ToolError struct{ Message string }

func (e *ToolError) Error() string { return e.Message }

// resultData reads a call's data and its text.
func resultData(res *mcp.CallToolResult) (any, string) {
	var text strings.Builder
	var other []any
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(c.Text)
		case *mcp.ImageContent:
			other = append(other, map[string]any{"type": "image", "mimeType": c.MIMEType, "bytes": len(c.Data)})
		case *mcp.AudioContent:
			other = append(other, map[string]any{"type": "audio", "mimeType": c.MIMEType, "bytes": len(c.Data)})
		case *mcp.ResourceLink:
			other = append(other, map[string]any{"type": "resource_link", "uri": c.URI, "name": c.Name})
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				other = append(other, map[string]any{"type": "resource", "uri": c.Resource.URI, "text": c.Resource.Text})
			}
		}
	}
	t := text.String()
	if res.StructuredContent != nil {
		return res.StructuredContent, t
	}
	if s := strings.TrimSpace(t); s != "" {
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			return v, t
		}
	}
	if len(other) > 0 {
		if t != "" {
			other = append([]any{map[string]any{"type": "text", "text": t}}, other...)
		}
		return other, t
	}
	return t, t
}

// authTransport adds the bearer token to requests to the plugin's own
// origin, and counts every byte the server sends against one budget.
type authTransport struct {
	base   http.RoundTripper
	origin string
	token  string
	budget *byteBudget
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if originOf(req.URL) != t.origin {
		return nil, fmt.Errorf("a request to %s, outside the plugin's origin %s, was refused", originOf(req.URL), t.origin)
	}
	if t.token != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &countedBody{rc: resp.Body, b: t.budget}
	return resp, nil
}

// byteBudget is how many more bytes a connection may read.
type byteBudget struct {
	left atomic.Int64
	over atomic.Bool
}

func (b *byteBudget) exceeded() bool { return b.over.Load() }

type countedBody struct {
	rc io.ReadCloser
	b  *byteBudget
}

func (c *countedBody) Read(p []byte) (int, error) {
	left := c.b.left.Load()
	if left <= 0 {
		c.b.over.Store(true)
		return 0, errors.New("the server sent too many bytes")
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.rc.Read(p)
	c.b.left.Add(-int64(n))
	return n, err
}

func (c *countedBody) Close() error { return c.rc.Close() }
