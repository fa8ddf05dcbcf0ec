package interpreter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
)

// TraceView is how many characters of a step's output, or of a request's
// or response's body, a trace line shows.
const TraceView = 160

// TraceMode is how much a trace shows.
type TraceMode int

const (
	// TraceLines prints one line per request and per step, each output
	// and body cut to TraceView characters.
	TraceLines TraceMode = iota
	// TraceFull prints the same lines with every output and body whole
	// (up to 1 MiB each) and every response header.
	TraceFull
	// TraceJSON writes one JSON object per event (docs/plugin-format.md,
	// "Traces").
	TraceJSON
)

// ParseTraceMode reads a --trace value: "" or "on" (lines), "full", "json".
func ParseTraceMode(s string) (TraceMode, error) {
	switch s {
	case "", "on", "true", "1", "lines":
		return TraceLines, nil
	case "full":
		return TraceFull, nil
	case "json":
		return TraceJSON, nil
	}
	return TraceLines, fmt.Errorf("--trace takes full or json, not %q", s)
}

// RequestEvent is one request a step sent, as the steps saw it: what the
// step asked for and what came back, both already without credentials
// (the proxy attaches sessions after the step and redacts answers before
// it); a trace passes every text through the run's redactor again.
type RequestEvent struct {
	Method      string
	Service     string // a campus service, or "" for a web URL
	Target      string // the path (campus) or URL (web), with the query
	Header      http.Header
	Body        []byte // the request's body
	ContentType string

	Status    int
	URL       string // the final URL, after redirects
	RespHead  http.Header
	MediaType string
	RespBody  []byte
	Binary    bool
	Duration  time.Duration
	Err       error
}

// WithRequestTrace receives every request a step sends, once its answer
// (or error) is known. Without it the transport is not wrapped: a run
// that is not traced pays nothing.
func WithRequestTrace(f func(RequestEvent)) RunOption {
	return func(c *runConfig) { c.reqTrace = f }
}

// tracedTransport reports each request of a traced run.
type tracedTransport struct {
	t    steps.Transport
	emit func(RequestEvent)
}

func (tt tracedTransport) Do(ctx context.Context, r *proxy.Request) (*proxy.Response, error) {
	start := time.Now()
	resp, err := tt.t.Do(ctx, r)
	e := RequestEvent{Method: r.Method, Service: r.Service, Target: requestTarget(r), Header: r.Header,
		Body: r.Body, ContentType: r.ContentType, Duration: time.Since(start), Err: err}
	if e.Method == "" {
		e.Method = http.MethodGet
	}
	if resp != nil {
		e.Status, e.URL, e.RespHead, e.MediaType, e.RespBody, e.Binary = resp.Status, resp.URL, resp.Header, resp.MediaType, resp.Body, resp.Binary
	}
	tt.emit(e)
	return resp, err
}

// requestTarget is the step's path or URL with its query, encoded as the
// proxy sends it (a "$input.x" written outside ${ } shows as %24input.x).
func requestTarget(r *proxy.Request) string {
	t := r.URL
	if r.Service != "" {
		t = r.Path
	}
	if len(r.Query) > 0 {
		sep := "?"
		if strings.Contains(t, "?") {
			sep = "&"
		}
		t += sep + r.Query.Encode()
	}
	return t
}

// TraceWriter prints one line per step to w: position, number, kind,
// duration and a short view of the output (or the error), passed through
// redact and rid of control characters.
func TraceWriter(w io.Writer, redact func(string) string) func(steps.Event) {
	return NewTracer(w, redact, TraceLines).Step
}

// Tracer writes a run's trace: its Step and Request methods are the
// WithTrace and WithRequestTrace sinks. Every text is cleaned of control
// characters and redacted before it is cut or written.
type Tracer struct {
	w      io.Writer
	redact func(string) string
	mode   TraceMode
	mu     sync.Mutex // a run is one goroutine, but a host may share a writer
}

// NewTracer writes the trace of mode to w; redact is the run's redactor
// (nil: none).
func NewTracer(w io.Writer, redact func(string) string, mode TraceMode) *Tracer {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &Tracer{w: w, redact: redact, mode: mode}
}

// Options are the run options that send the trace here.
func (t *Tracer) Options() []RunOption {
	return []RunOption{WithTrace(t.Step), WithRequestTrace(t.Request)}
}

// text cleans and redacts s. Clean first: an invisible character removed
// after the redaction could join a credential.
func (t *Tracer) text(s string) string { return t.redact(steps.CleanString(s)) }

// view cuts s to TraceView characters unless the trace is full.
func (t *Tracer) view(s string) string {
	if t.mode != TraceLines {
		return s
	}
	if r := []rune(s); len(r) > TraceView {
		return string(r[:TraceView]) + "…"
	}
	return s
}

func (t *Tracer) line(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(t.w, steps.CleanString(s))
}

func (t *Tracer) object(v map[string]any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b.Reset()
		_ = enc.Encode(map[string]any{"event": "error", "error": err.Error()})
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.w.Write(b.Bytes())
}

// Step reports one step.
func (t *Tracer) Step(e steps.Event) {
	if t.mode == TraceJSON {
		t.stepJSON(e)
		return
	}
	var view string
	switch {
	case e.Err != nil:
		view = "error: " + hidePreviews(e.Err.Error())
	case e.Skipped:
		view = "skipped"
	default:
		b, over, err := steps.EncodeBounded(e.Output, 64, maxTraceBytes)
		switch {
		case over:
			view = "(an output of more than 1 MiB as JSON)"
		case err != nil:
			view = "(" + err.Error() + ")"
		default:
			view = string(b)
		}
	}
	// Redact the whole text first: a cut could split a secret.
	view = t.view(t.text(view))
	t.line(fmt.Sprintf("trace: %s: step %s (%s) %s %s", e.Pos, e.Label, e.Kind, e.Duration.Round(time.Microsecond), view))
}

func (t *Tracer) stepJSON(e steps.Event) {
	o := map[string]any{
		"event": "step", "pos": t.text(e.Pos.String()), "file": t.text(e.Pos.File), "line": e.Pos.Line, "col": e.Pos.Col,
		"step": e.Label, "kind": e.Kind, "durationMs": ms(e.Duration),
	}
	switch {
	case e.Err != nil:
		o["error"] = t.text(hidePreviews(e.Err.Error()))
	case e.Skipped:
		o["skipped"] = true
	default:
		// Value by value, so the text stays JSON whatever a credential is.
		b, over, err := steps.EncodeBounded(e.Output, 64, maxTraceBytes)
		if err == nil && !over {
			b, err = redactEncoded(b, e.Output, 64, redactFunc(t.redact))
		}
		switch {
		case over:
			o["outputOmitted"] = "an output of more than 1 MiB as JSON"
		case err != nil:
			o["outputOmitted"] = t.text(err.Error())
		default:
			o["output"] = json.RawMessage(b)
		}
	}
	t.object(o)
}

// traceHeaders are the response headers a line trace shows; a full or
// JSON trace shows every header the step saw.
var traceHeaders = []string{"Content-Type", "Content-Length", "Location", "Retry-After", "Last-Modified", "Etag"}

// Request reports one request.
func (t *Tracer) Request(e RequestEvent) {
	target := e.Target
	if e.Service != "" {
		target = e.Service + " " + target
	}
	target = t.text(target)
	if t.mode == TraceJSON {
		t.requestJSON(e)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "trace: request %s %s", e.Method, target)
	if h := t.headers(e.Header, nil); h != "" {
		b.WriteString(" " + h)
	}
	if len(e.Body) > 0 {
		fmt.Fprintf(&b, " body %s", t.view(t.quote(e.Body)))
	}
	t.line(b.String())
	b.Reset()
	if e.Err != nil {
		fmt.Fprintf(&b, "trace:   error after %s: %s", e.Duration.Round(time.Microsecond), t.text(hidePreviews(e.Err.Error())))
		t.line(b.String())
		return
	}
	fmt.Fprintf(&b, "trace:   %d %s %s", e.Status, t.text(e.URL), e.Duration.Round(time.Microsecond))
	only := traceHeaders
	if t.mode == TraceFull {
		only = nil
	}
	if h := t.headers(e.RespHead, only); h != "" {
		b.WriteString(" " + h)
	}
	switch {
	case e.Binary:
		fmt.Fprintf(&b, " body (not text: %s)", t.text(e.MediaType))
	case len(e.RespBody) > 0:
		fmt.Fprintf(&b, " body %d bytes %s", len(e.RespBody), t.view(t.quote(e.RespBody)))
	default:
		b.WriteString(" body empty")
	}
	t.line(b.String())
}

// quote shows a body as a quoted string: newlines and quotes escaped, so
// one request stays on one line. A body over 1 MiB shows its start,
// redacted before it is cut (capText).
func (t *Tracer) quote(body []byte) string {
	var q bytes.Buffer
	enc := json.NewEncoder(&q)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(t.capText(body))
	return strings.TrimSuffix(q.String(), "\n")
}

// headers shows h as {Name: value, ...}, sorted, only the names in only
// (nil: all).
func (t *Tracer) headers(h http.Header, only []string) string {
	if len(h) == 0 {
		return ""
	}
	var names []string
	if only == nil {
		for k := range h {
			names = append(names, k)
		}
		sort.Strings(names)
	} else {
		for _, k := range only {
			if len(h.Values(k)) > 0 {
				names = append(names, k)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		v := strings.Join(h.Values(k), ", ")
		fmt.Fprintf(&b, "%s: %s", t.text(http.CanonicalHeaderKey(k)), t.view(t.text(v)))
	}
	b.WriteByte('}')
	return b.String()
}

func (t *Tracer) headerMap(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k := range h {
		out[t.text(http.CanonicalHeaderKey(k))] = t.text(strings.Join(h.Values(k), ", "))
	}
	return out
}

func (t *Tracer) requestJSON(e RequestEvent) {
	o := map[string]any{"event": "request", "method": e.Method, "durationMs": ms(e.Duration)}
	if e.Service != "" {
		o["service"] = t.text(e.Service)
		o["path"] = t.text(e.Target)
	} else {
		o["url"] = t.text(e.Target)
	}
	if q := t.targetQuery(e.Target); q != nil {
		o["query"] = q
	}
	if len(e.Header) > 0 {
		o["headers"] = t.headerMap(e.Header)
	}
	if len(e.Body) > 0 {
		o["body"] = t.capText(e.Body)
		if e.ContentType != "" {
			o["contentType"] = t.text(e.ContentType)
		}
	}
	if e.Err != nil {
		o["error"] = t.text(hidePreviews(e.Err.Error()))
	} else {
		resp := map[string]any{"status": e.Status, "url": t.text(e.URL), "headers": t.headerMap(e.RespHead), "mediaType": t.text(e.MediaType), "bytes": len(e.RespBody)}
		if e.Binary {
			resp["binary"] = true
		} else {
			resp["body"] = t.capText(e.RespBody)
			if len(e.RespBody) > maxTraceBytes {
				resp["bodyCut"] = true
			}
		}
		o["response"] = resp
	}
	t.object(o)
}

// targetQuery is the query of a target as decoded parameters, each name
// and value redacted (nil: none).
func (t *Tracer) targetQuery(target string) map[string][]string {
	i := strings.IndexByte(target, '?')
	if i < 0 {
		return nil
	}
	q, err := url.ParseQuery(target[i+1:])
	if err != nil || len(q) == 0 {
		return nil
	}
	out := make(map[string][]string, len(q))
	for k, vs := range q {
		rk := t.text(k)
		for _, v := range vs {
			out[rk] = append(out[rk], t.text(v))
		}
	}
	return out
}

// capText is a body cleaned and redacted, then cut to 1 MiB: redacted
// first, since a cut could end inside a credential a step rebuilt (a
// session from a half per response, placed by the step's own text before
// it), and its start is no credential the redactor finds afterwards.
func (t *Tracer) capText(b []byte) string {
	s := t.text(string(b))
	if len(s) <= maxTraceBytes {
		return s
	}
	n := maxTraceBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
