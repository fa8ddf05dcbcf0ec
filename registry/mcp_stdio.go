package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioOptions bound the stdio transport.
type StdioOptions struct {
	// MaxLine bounds one line (one JSON-RPC message) in bytes
	// (DefaultMaxLine when 0). A longer line is discarded up to its newline
	// and answered with an invalid-request error.
	MaxLine int
	// MaxPending bounds the client's requests read and not yet answered
	// (DefaultMaxPending when 0); a request beyond it is answered at once
	// with a busy error.
	MaxPending int
	// Drain bounds how long the requests read before the end of input may
	// still run (DefaultDrain when 0): they are answered before the
	// connection ends, but a request that never finishes must not keep the
	// process alive.
	Drain time.Duration
}

// The stdio transport's default bounds.
const (
	DefaultMaxLine    = 4 << 20
	DefaultMaxPending = 128
	DefaultDrain      = 60 * time.Second
)

// CodeBusy is the JSON-RPC error code of a request refused because too
// many are pending (the range -32000 to -32099 is the server's own).
const CodeBusy = -32000

// NewStdioTransport is an MCP transport over newline-delimited JSON-RPC on
// r and w that never lets the client's mistakes end the session: each line
// is checked before the SDK sees it, and a line that is not one JSON-RPC
// 2.0 message (not JSON, an array or batch, no or a wrong "jsonrpc", a bad
// id, a method that is not a string, a line over the bound) is answered
// with -32700 (parse error) or -32600 (invalid request) while the session
// goes on. It also answers, with -32600, a request other than ping before
// initialize and a second initialize; drops the answer to a request the
// client cancelled with notifications/cancelled; gives every error a
// JSON-RPC code (never 0); and at the end of input lets the requests
// already read finish and answers them before the connection closes.
func NewStdioTransport(r io.Reader, w io.Writer, o StdioOptions) mcp.Transport {
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.Drain <= 0 {
		o.Drain = DefaultDrain
	}
	return &stdioTransport{r: r, w: w, o: o}
}

type stdioTransport struct {
	r    io.Reader
	w    io.Writer
	o    StdioOptions
	used bool
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	if t.used {
		return nil, errors.New("the stdio transport connects once")
	}
	t.used = true
	c := &stdioConn{
		w: t.w, o: t.o,
		in:        make(chan jsonrpc.Message),
		eof:       make(chan struct{}),
		closed:    make(chan struct{}),
		changed:   make(chan struct{}, 1),
		pending:   map[jsonrpc.ID]bool{},
		outgoing:  map[jsonrpc.ID]bool{},
		cancelled: map[jsonrpc.ID]bool{},
	}
	go c.readLoop(t.r)
	return c, nil
}

type stdioConn struct {
	o StdioOptions

	wmu sync.Mutex // one line at a time on w
	w   io.Writer

	in      chan jsonrpc.Message // checked messages for the SDK
	eof     chan struct{}        // closed when the input ended
	closed  chan struct{}
	once    sync.Once
	changed chan struct{} // poked when pending or outgoing shrink

	mu          sync.Mutex
	pending     map[jsonrpc.ID]bool // the client's requests handed on, not answered
	outgoing    map[jsonrpc.ID]bool // our requests to the client, not answered
	cancelled   map[jsonrpc.ID]bool // pending requests the client cancelled
	initialized bool                // an initialize was handed on
	readErr     error
	drainUntil  time.Time
}

func (c *stdioConn) SessionID() string { return "" }

func (c *stdioConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *stdioConn) poke() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// readLoop reads lines, answers the bad ones itself and hands the good
// ones to Read.
func (c *stdioConn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	defer close(c.eof)
	for {
		line, tooLong, err := readLine(br, c.o.MaxLine)
		if tooLong {
			c.reply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a line is longer than %d bytes; it was discarded", c.o.MaxLine))
		} else if len(bytes.TrimSpace(line)) > 0 {
			if msg := c.check(line); msg != nil {
				select {
				case c.in <- msg:
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			c.mu.Lock()
			if !errors.Is(err, io.EOF) {
				c.readErr = err
			}
			c.drainUntil = time.Now().Add(c.o.Drain)
			c.mu.Unlock()
			return
		}
	}
}

// readLine reads one line without its newline, at most max bytes; a
// longer line is read to its end and dropped.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		return bytes.TrimSuffix(line, []byte("\n")), false, err
	}
}

// check validates one line; it answers a bad one and returns nil, or
// returns the message to hand on.
func (c *stdioConn) check(line []byte) jsonrpc.Message {
	code, text, echo, msg := c.classify(line)
	if msg == nil {
		c.reply(echo, code, text)
	}
	return msg
}

// classify decides about one line: the message to hand on, or the error
// to answer with (and the id to echo, nil for null).
func (c *stdioConn) classify(line []byte) (code int, text string, echo json.RawMessage, msg jsonrpc.Message) {
	line = bytes.TrimSpace(line) // JSON allows whitespace around a value
	if !json.Valid(line) {
		return jsonrpc.CodeParseError, "parse error: the line is not JSON", nil, nil
	}
	switch line[0] {
	case '[':
		return jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one JSON-RPC message per line", nil, nil
	case '{':
	default:
		return jsonrpc.CodeInvalidRequest, "invalid request: a message must be a JSON object", nil, nil
	}
	var m map[string]json.RawMessage // exact keys: a map does not fold case
	if err := json.Unmarshal(line, &m); err != nil {
		return jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error(), nil, nil
	}
	rawID, hasID := m["id"]
	id, idOK := checkID(rawID, hasID)
	if idOK && id.IsValid() {
		echo = rawID
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`, echo, nil
	}
	if !idOK {
		return jsonrpc.CodeInvalidRequest, "invalid request: an id must be a string or an integer", nil, nil
	}
	rawMethod, hasMethod := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if !hasMethod {
		// a response to one of our requests
		if !id.IsValid() || hasResult == hasError {
			return jsonrpc.CodeInvalidRequest, "invalid request: a message needs a method, or an id with exactly one of result and error", echo, nil
		}
		dec, err := jsonrpc.DecodeMessage(line)
		if _, ok := dec.(*jsonrpc.Response); err != nil || !ok {
			return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: not a response: %v", err), echo, nil
		}
		c.mu.Lock()
		delete(c.outgoing, id)
		c.mu.Unlock()
		c.poke()
		return 0, "", nil, dec
	}
	var method string
	if json.Unmarshal(rawMethod, &method) != nil || method == "" {
		return jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a non-empty string`, echo, nil
	}
	if hasResult || hasError {
		return jsonrpc.CodeInvalidRequest, "invalid request: a request cannot carry a result or an error", echo, nil
	}
	if p, ok := m["params"]; ok && p[0] != '{' && string(p) != "null" {
		return jsonrpc.CodeInvalidParams, `invalid params: "params" must be an object`, echo, nil
	}
	dec, err := jsonrpc.DecodeMessage(line)
	req, ok := dec.(*jsonrpc.Request)
	if err != nil || !ok || req.Method != method || req.ID != id {
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %v", err), echo, nil
	}
	if !id.IsValid() {
		if method == "notifications/cancelled" {
			c.cancel(m["params"])
		}
		return 0, "", nil, req
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.pending[id]:
		return jsonrpc.CodeInvalidRequest, "invalid request: the id is already in use by a request not yet answered", echo, nil
	case method == "initialize" && c.initialized:
		return jsonrpc.CodeInvalidRequest, "invalid request: the session is already initialized; initialize may be sent once", echo, nil
	case method != "initialize" && method != "ping" && !c.initialized:
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %q before initialize; send initialize first", method), echo, nil
	case len(c.pending) >= c.o.MaxPending:
		return CodeBusy, fmt.Sprintf("busy: %d requests are waiting for an answer; try again when one has been answered", len(c.pending)), echo, nil
	}
	if method == "initialize" {
		c.initialized = true
	}
	c.pending[id] = true
	return 0, "", nil, req
}

// checkID reads an id: absent (no id), a string, or an integer; null
// (which MCP forbids) and every other value are not ids.
func checkID(raw json.RawMessage, present bool) (jsonrpc.ID, bool) {
	if !present {
		return jsonrpc.ID{}, true
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return jsonrpc.ID{}, false
	}
	switch x := v.(type) {
	case string:
		id, err := jsonrpc.MakeID(x)
		return id, err == nil
	case json.Number:
		n, err := x.Int64()
		if err != nil || n > 1<<53 || n < -(1<<53) {
			return jsonrpc.ID{}, false
		}
		id, err := jsonrpc.MakeID(float64(n))
		return id, err == nil
	}
	return jsonrpc.ID{}, false
}

func (c *stdioConn) cancel(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, ok := checkID(p.RequestID, p.RequestID != nil)
	if !ok || !id.IsValid() {
		return
	}
	c.mu.Lock()
	if c.pending[id] {
		c.cancelled[id] = true
	}
	c.mu.Unlock()
}

// Read hands the SDK the next checked message. After the end of input it
// waits until every request read has been answered (within Drain), failing
// our own requests to the client, which can no longer answer, so that the
// calls waiting on them finish; then it reports the end.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case <-c.eof:
	}
	for {
		c.mu.Lock()
		for id := range c.outgoing {
			delete(c.outgoing, id)
			c.mu.Unlock()
			return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client closed its input before answering"}}, nil
		}
		n, until, rerr := len(c.pending), c.drainUntil, c.readErr
		c.mu.Unlock()
		if n == 0 {
			if rerr != nil {
				return nil, rerr
			}
			return nil, io.EOF
		}
		wait := time.Until(until)
		if wait <= 0 {
			return nil, io.EOF
		}
		timer := time.NewTimer(wait)
		select {
		case <-c.changed:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-c.closed:
			timer.Stop()
			return nil, io.EOF
		}
		timer.Stop()
	}
}

// Write sends one message. An answer to a request the client cancelled is
// dropped; an error without a JSON-RPC code gets -32603.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		c.mu.Lock()
		drop := c.cancelled[m.ID]
		delete(c.cancelled, m.ID)
		delete(c.pending, m.ID)
		c.mu.Unlock()
		c.poke()
		if drop {
			return nil
		}
		if m.Error != nil {
			var we *jsonrpc.Error
			if !errors.As(m.Error, &we) || we.Code == 0 {
				cp := *m
				cp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: m.Error.Error()}
				msg = &cp
			} else if we != m.Error {
				cp := *m
				cp.Error = &jsonrpc.Error{Code: we.Code, Message: m.Error.Error(), Data: we.Data}
				msg = &cp
			}
		}
	case *jsonrpc.Request:
		if m.ID.IsValid() {
			c.mu.Lock()
			c.outgoing[m.ID] = true
			c.mu.Unlock()
		}
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

func (c *stdioConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.w.Write(append(b, '\n'))
	return err
}

// reply answers a bad line itself; id is the raw id to echo, nil for null.
func (c *stdioConn) reply(id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: msg}})
	_ = c.writeLine(b)
}
