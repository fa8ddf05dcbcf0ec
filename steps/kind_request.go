package steps

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pkuinfo/harness/internal/limits"
	"github.com/pkuinfo/harness/internal/netguard"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/proxy"
	"go.yaml.in/yaml/v3"
)

// requestDecl declares a request's keys, for request and paginate.
var requestDecl = &yamlx.Decl{Name: "request", Fields: []yamlx.Field{
	{Name: "service", Type: yamlx.String{MinLen: 1}, Doc: "campus service from access.campus (with path)"},
	{Name: "path", Type: TemplateType{Esc: Segment, Label: "template (path)"}, Doc: "path starting with /; each ${ } value is escaped to stay inside one segment"},
	{Name: "url", Type: TemplateType{Esc: Segment, Label: "template (path)"}, Doc: "absolute URL under an origin from access.web; the origin must be literal"},
	{Name: "method", Type: yamlx.Enum{Values: []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}, Fold: true}, Default: "GET", Doc: "HTTP method"},
	{Name: "query", Type: TemplateMap, Doc: "query parameters"},
	{Name: "headers", Type: TemplateMap, Doc: "request headers, from a short allow-list (names compared after folding _ to - and case): Accept, Accept-Language, Cache-Control, Content-Type, If-Match, If-Modified-Since, If-None-Match, If-Range, If-Unmodified-Since, Origin and Referer (the request's own origin), Pragma, Range, User-Agent, X-Requested-With; Range and If-Range on web requests only (a campus page asked for a piece at a time could hand over a session in pieces)"},
	{Name: "form", Type: TemplateMap, Doc: "body sent as application/x-www-form-urlencoded"},
	{Name: "json", Type: ValueType, Doc: "body sent as JSON; strings are templates, and a string that is one ${ } keeps its value's type"},
	{Name: "body", Type: TemplateType{Esc: Text}, Doc: "raw text body (with contentType)"},
	{Name: "contentType", Type: yamlx.String{}, Default: "text/plain; charset=utf-8", Doc: "media type of body"},
	{Name: "retry", Type: yamlx.Object{Decl: retryDecl}, Doc: "retry on 429, 500, 502-504, timeouts and failed connections, within the call's deadline, doubling the wait; GET and HEAD only"},
}}

// retryDecl declares a request's retry policy.
var retryDecl = &yamlx.Decl{Name: "retry", Fields: []yamlx.Field{
	{Name: "attempts", Type: yamlx.Int{Min: 1, Max: limits.MaxAttempts}, Default: int64(2), Doc: "attempts in all"},
	{Name: "backoff", Type: yamlx.Duration{Max: 10 * time.Second}, Default: 500 * time.Millisecond, Doc: "the first wait"},
}}

var requestSpec = Spec{
	Kind:    "request",
	Summary: "Send one HTTP request through the proxy: a campus service + path, or a URL under a declared web origin. Output {status, headers, body, url}; body is parsed JSON when the response is JSON, else text.",
	Decl:    requestDecl,
	Example: `- request:
    service: portal
    path: /api/classrooms/${ $input.building }/free
    query: { lang: zh }
    headers: { Accept: application/json }
  as: res
- return: .body`,
	Caps: Caps{Network: true},
}

func init() { builtin.mustRegister(requestSpec, decodeRequest) }

// requestStep is a decoded request.
type requestStep struct {
	service string
	path    *Template
	url     *Template
	method  string
	query   []kvTemplate
	headers []kvTemplate
	form    []kvTemplate
	json    *valueTemplate
	body    *Template
	ctype   string
	retry   *proxy.RetryPolicy // nil: one attempt

	noHeaders bool // no step reads the output's headers (Block.settle)
}

func (s *requestStep) skipHeaders() { s.noHeaders = true }

type kvTemplate struct {
	key string
	t   *Template
}

func decodeRequest(c *Compiler, n *yaml.Node) Step {
	if s := decodeRequestStep(c, n); s != nil {
		return s
	}
	return nil // not a nil *requestStep in a Step
}

func decodeRequestStep(c *Compiler, n *yaml.Node) *requestStep {
	m, good := c.Decode(n, requestDecl)
	if m == nil {
		return nil
	}
	s := &requestStep{method: m.String("method"), ctype: m.String("contentType")}
	use := Use{Pos: c.Pos(n), Method: s.method, MethodPos: c.Pos(n)}
	if v := m.NodeOf("method"); v != nil {
		use.MethodPos = c.Pos(v)
		if !m.Has("method") {
			use.Method = "" // unreadable: unsafe
		}
	}
	hasService, hasPath, hasURL := m.NodeOf("service") != nil, m.NodeOf("path") != nil, m.NodeOf("url") != nil
	switch {
	case m.Unknown > 0:
		return nil // a misspelled key: its error says it all
	case hasService && hasURL, hasPath && hasURL:
		c.Errorf(n, "request has either service + path (campus) or url (web), not both")
		return nil
	case hasService != hasPath:
		c.Errorf(n, "a campus request needs both service and path")
		return nil
	case !hasService && !hasURL:
		c.Errorf(n, "request needs service + path (a campus service) or url (a declared web origin)")
		return nil
	}
	if hasService {
		s.service = m.String("service")
		use.Service = s.service
		use.Pos = c.Pos(m.NodeOf("service"))
		fp := m.NodeOf("path")
		s.path, _ = m.Value("path").(*Template)
		if s.path == nil {
			return nil
		}
		if !strings.HasPrefix(s.path.Src, "/") {
			c.Errorf(fp, "path must start with /")
			good = false
		}
		if strings.ContainsAny(s.path.Prefix(), "?#") || strings.Contains(s.path.Prefix(), "/../") || strings.Contains(s.path.Prefix(), "/./") || strings.HasSuffix(s.path.Prefix(), "/..") {
			c.Errorf(fp, "path holds ?, # or a dot segment: put parameters in query")
			good = false
		}
		if strings.HasPrefix(s.path.Src, "/") {
			use.Path = s.path.Prefix()
			_, use.PathLiteral = s.path.Literal()
		}
	} else {
		s.url, _ = m.Value("url").(*Template)
		if s.url == nil {
			return nil
		}
		prefix := s.url.Prefix()
		if lit, ok := s.url.Literal(); ok {
			prefix = lit + "/"
		}
		origin, err := literalOrigin(prefix)
		if err != nil {
			c.Errorf(m.NodeOf("url"), "url %v", err)
			return nil
		}
		use.Origin = origin
		use.Pos = c.Pos(m.NodeOf("url"))
	}
	kvs := func(key string) []kvTemplate {
		entries, _ := m.Value(key).([]yamlx.Entry)
		if entries == nil {
			return nil
		}
		out := make([]kvTemplate, 0, len(entries))
		for _, e := range entries {
			t, _ := e.Value.(*Template)
			if t == nil {
				continue
			}
			out = append(out, kvTemplate{key: e.Key, t: t})
		}
		return out
	}
	s.query = kvs("query")
	s.headers = kvs("headers")
	s.form = kvs("form")
	if entries, ok := m.Value("headers").([]yamlx.Entry); ok {
		for _, e := range entries {
			// Request headers by allow-list (the proxy checks the same
			// list again at run time).
			if _, err := netguard.CheckStepHeader(e.Key); err != nil {
				c.Errorf(e.KeyN, "%v", err)
				good = false
			}
			if hasService && netguard.CampusRefusedHeader(e.Key) {
				c.Errorf(e.KeyN, "header %s asks for a part of a page, which a campus request may not (a page that shows a session, asked for a piece at a time, would hand a step each piece); only web requests take it", e.Key)
				good = false
			}
			use.Headers = append(use.Headers, HeaderUse{Name: e.Key, Pos: c.Pos(e.KeyN)})
		}
	}
	bodies := 0
	for _, b := range []string{"form", "json", "body"} {
		if m.NodeOf(b) != nil {
			bodies++
		}
	}
	s.json, _ = m.Value("json").(*valueTemplate)
	s.body, _ = m.Value("body").(*Template)
	if v, ok := m.Get("contentType"); ok {
		if m.NodeOf("body") == nil {
			c.Errorf(v.Node, "contentType goes with body")
			good = false
		} else if _, _, err := mime.ParseMediaType(s.ctype); err != nil {
			c.Errorf(v.Node, "contentType %q is not a media type", s.ctype)
			good = false
		}
	}
	if bodies > 1 {
		c.Errorf(n, "request has one body: form, json or body")
		good = false
	}
	if bodies > 0 && safeMethod(s.method) {
		c.Errorf(n, "a %s request has no body", s.method)
		good = false
	}
	if v, ok := m.Get("retry"); ok {
		if !safeMethod(s.method) {
			c.Errorf(v.Node, "retry is only for idempotent reads (GET, HEAD), not %s", s.method)
			good = false
		} else if r := v.Value.(*yamlx.Obj); r.Int("attempts") > 1 {
			// attempts in all: that many tries less one retries.
			s.retry = &proxy.RetryPolicy{Max: int(r.Int("attempts")) - 1, Backoff: r.Value("backoff").(time.Duration)}
		}
	}
	c.Use(use)
	if !good {
		return nil
	}
	return s
}

// literalOrigin reads the origin a URL template starts with; the origin may
// not hold an interpolation.
func literalOrigin(prefix string) (string, error) {
	i, j := strings.Index(prefix, "://"), -1
	if i >= 0 {
		j = strings.IndexAny(prefix[i+3:], "/?#")
	}
	if j < 0 {
		return "", fmt.Errorf("must start with a literal scheme://host/ (no ${ } before the path)")
	}
	u, err := url.Parse(prefix[:i+3+j])
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return "", fmt.Errorf("must start with http:// or https:// and a host")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	o := u.Scheme + "://" + host
	if port != "" && !(u.Scheme == "https" && port == "443") && !(u.Scheme == "http" && port == "80") {
		o += ":" + port
	}
	return o, nil
}

func (s *requestStep) Run(ctx context.Context, f *Frame) (any, error) {
	return s.do(ctx, f, f.Dot)
}

// build renders the request against v.
func (s *requestStep) build(ctx context.Context, f *Frame, v any) (*proxy.Request, error) {
	r := &proxy.Request{Service: s.service, Method: s.method, Retry: s.retry}
	var err error
	if s.path != nil {
		if r.Path, err = s.path.Render(ctx, f, v); err != nil {
			return nil, fmt.Errorf("path: %w", err)
		}
	} else if r.URL, err = s.url.Render(ctx, f, v); err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	if len(s.query) > 0 {
		r.Query = make(url.Values, len(s.query))
		for _, q := range s.query {
			x, err := q.t.Render(ctx, f, v)
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", q.key, err)
			}
			r.Query.Add(q.key, x)
		}
	}
	if len(s.headers) > 0 {
		r.Header = make(http.Header, len(s.headers))
		for _, h := range s.headers {
			x, err := h.t.Render(ctx, f, v)
			if err != nil {
				return nil, fmt.Errorf("header %s: %w", h.key, err)
			}
			if strings.ContainsAny(x, "\r\n\x00") {
				return nil, fmt.Errorf("header %s: the value holds a line break", h.key)
			}
			r.Header.Set(h.key, x)
		}
	}
	switch {
	case s.form != nil:
		form := make(url.Values, len(s.form))
		for _, q := range s.form {
			x, err := q.t.Render(ctx, f, v)
			if err != nil {
				return nil, fmt.Errorf("form %s: %w", q.key, err)
			}
			form.Add(q.key, x)
		}
		r.Body, r.ContentType = []byte(form.Encode()), "application/x-www-form-urlencoded"
	case s.json != nil:
		val, err := s.json.Eval(ctx, f, v)
		if err != nil {
			return nil, fmt.Errorf("json: %w", err)
		}
		if r.Body, err = EncodeWithin(val, f.Limits.Depth, f.Limits.StringBytes); err != nil {
			return nil, fmt.Errorf("json: %w", err)
		}
		r.ContentType = "application/json"
	case s.body != nil:
		x, err := s.body.Render(ctx, f, v)
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		r.Body, r.ContentType = []byte(x), s.ctype
	}
	return r, nil
}

// do sends the request rendered against v and returns the step's output.
func (s *requestStep) do(ctx context.Context, f *Frame, v any) (any, error) {
	r, err := s.build(ctx, f, v)
	if err != nil {
		return nil, err
	}
	if err := f.CountRequest(); err != nil {
		return nil, err
	}
	if f.Transport == nil {
		return nil, errors.New("no transport: this host runs no requests")
	}
	rctx, own := bounded(ctx, f.Limits.RequestTimeout)
	resp, err := f.Transport.Do(rctx, r)
	own.release()
	if err != nil {
		var lr *proxy.LoginRequiredError
		if errors.As(err, &lr) {
			f.End(map[string]any{"status": "login_required", "service": lr.Service, "message": lr.Message})
			return nil, nil
		}
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, &LimitError{Limit: "requestTimeout", Max: int64(f.Limits.RequestTimeout / time.Millisecond), What: "the request's time in milliseconds"}
		}
		return nil, err
	}
	if int64(len(resp.Body)) > f.Limits.ResponseBytes {
		return nil, &LimitError{Limit: "responseBytes", Max: f.Limits.ResponseBytes, What: "the response body"}
	}
	body, err := parseBody(resp, f.Limits.Depth)
	if err != nil {
		return nil, err
	}
	if s.noHeaders && f.Trace == nil {
		return map[string]any{"status": resp.Status, "body": body, "url": resp.URL}, nil
	}
	return map[string]any{"status": resp.Status, "headers": headerMap(resp.Header), "body": body, "url": resp.URL}, nil
}

func headerMap(h http.Header) map[string]any {
	out := make(map[string]any, len(h))
	for k, v := range h {
		out[lowerHeaderName(k)] = strings.Join(v, ", ")
	}
	return out
}

// commonHeaders are the lower-case names of the response headers most
// answers have, by canonical name: no new string for each answer.
var commonHeaders = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"Content-Type", "Content-Length", "Date", "Server", "Cache-Control", "Expires",
		"Last-Modified", "Etag", "Vary", "Connection", "Keep-Alive", "Pragma", "Location", "Content-Language",
		"Accept-Ranges", "Age", "X-Content-Type-Options", "X-Frame-Options", "X-Xss-Protection",
		"Strict-Transport-Security", "Access-Control-Allow-Origin", "Referrer-Policy", "Content-Disposition"} {
		m[k] = strings.ToLower(k)
	}
	return m
}()

func lowerHeaderName(k string) string {
	if l, ok := commonHeaders[k]; ok {
		return l
	}
	return strings.ToLower(k)
}

// parseBody is JSON when the media type says so or the body is a JSON object
// or array; text otherwise. A body that is not text is refused.
func parseBody(resp *proxy.Response, depth int) (any, error) {
	b := resp.Body
	mt := strings.ToLower(resp.MediaType)
	if mt == "" {
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			mt, _, _ = mime.ParseMediaType(ct)
		}
	}
	isJSON := mt == "application/json" || strings.HasSuffix(mt, "+json")
	if resp.Binary || !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0 {
		what := mt
		if what == "" {
			what = "binary data"
		}
		return nil, fmt.Errorf("the response is not text (%s)", what)
	}
	if isJSON || looksJSON(b) {
		v, err := DecodeJSON(b, depth)
		if err == nil {
			return v, nil
		}
		var le *LimitError
		if errors.As(err, &le) {
			return nil, err
		}
		// Not JSON after all (a server's error page under a JSON label):
		// the text, for the steps to look at.
	}
	return string(b), nil
}

func looksJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

var _ Step = (*requestStep)(nil)
