package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pkuinfo/harness/manifest"
)

// Request is one request of a step: a campus request (Service + Path) or a
// web request (URL).
type Request struct {
	Service string // a campus service of the catalogue the document declares
	Path    string // its absolute path, as the template produced it (may hold "?query")
	URL     string // or a full URL under a declared web origin
	Method  string // default GET
	Query   url.Values
	// Header may not set Cookie, Authorization, Host, Accept-Encoding,
	// Content-Length, hop-by-hop or forwarding headers, nor any catalogue
	// service's auth or CSRF header: such a request is refused.
	Header      http.Header
	Body        []byte
	ContentType string
	Retry       *RetryPolicy // optional, idempotent methods only
}

// Response is what a step sees of a response.
type Response struct {
	Status int
	// Header has Set-Cookie, Authorization-like and every catalogue auth
	// header removed, and credential values redacted.
	Header http.Header
	// Body is decompressed, bounded, decoded to UTF-8 and redacted. A
	// response that is not text (an image, a PDF, ...) has Binary set and
	// no Body.
	Body      []byte
	Binary    bool
	URL       string // the final URL, redacted
	MediaType string // e.g. application/json
}

// LoginRequiredError is returned by Do when a campus service says the
// session is missing or expired (a redirect to its login, a login status, a
// known JSON code). The interpreter turns it into {status: login_required,
// service, message}.
type LoginRequiredError struct {
	Service string
	Message string
}

func (e *LoginRequiredError) Error() string {
	return "login required for campus service " + strconv.Quote(e.Service) + ": " + e.Message
}

func loginRequired(svc string) *LoginRequiredError {
	return &LoginRequiredError{Service: svc,
		Message: "the " + svc + " session is missing or has expired; sign in to " + svc + " again"}
}

// RequestError is a request that failed on the way (connection, TLS,
// timeout, guard). Its message is redacted; it unwraps only to ErrRefused,
// ErrLimit or a context error, never to the original error (which may hold
// a URL with a credential).
type RequestError struct {
	Service string // "" for a web request
	URL     string // redacted
	Msg     string // redacted
	Timeout bool
	cause   error
}

func (e *RequestError) Error() string {
	return "request to " + e.URL + " failed: " + e.Msg
}

// Unwrap returns ErrRefused, ErrLimit, context.Canceled,
// context.DeadlineExceeded or nil.
func (e *RequestError) Unwrap() error { return e.cause }

// grant is a declared campus service: any path, or these decoded prefixes.
type grant struct {
	any      bool
	prefixes []string
}

func (g *grant) allows(decoded string) bool {
	if g.any {
		return true
	}
	for _, p := range g.prefixes {
		if prefixMatch(decoded, p) {
			return true
		}
	}
	return false
}

// Call is one tool call: its grants, its cookie jar and its counters. It is
// safe for concurrent use by the call's steps.
type Call struct {
	p      *Proxy
	plugin string
	campus map[string]*grant
	web    map[string]bool // canonical origins
	sem    chan struct{}
	n      atomic.Int64

	jarMu sync.Mutex
	jar   map[string]map[string]string // origin -> cookie name -> value
}

// NewCall starts a tool call of a plugin with the document's declared
// access. A web origin that is a campus host is never granted.
func (p *Proxy) NewCall(pluginID string, access manifest.Access) *Call {
	c := &Call{
		p:      p,
		plugin: pluginID,
		campus: map[string]*grant{},
		web:    map[string]bool{},
		sem:    make(chan struct{}, p.lim.CallConcurrency),
		jar:    map[string]map[string]string{},
	}
	for _, ca := range access.Campus {
		g := c.campus[ca.Service]
		if g == nil {
			g = &grant{}
			c.campus[ca.Service] = g
		}
		if len(ca.Paths) == 0 {
			g.any = true
		}
		for _, path := range ca.Paths {
			if cp, err := normalisePath(path); err == nil && cp.query == "" {
				g.prefixes = append(g.prefixes, cp.decoded)
			}
		}
		if ss, ok := p.keys.Get(ca.Service); ok {
			p.addSecrets(ss)
		}
	}
	for _, o := range access.Web {
		host, err := canonicalHost(o.Host)
		if err != nil || (o.Scheme != "http" && o.Scheme != "https") {
			continue
		}
		port := o.Port
		if port == 0 {
			port = 443
			if o.Scheme == "http" {
				port = 80
			}
		}
		if p.isCampusHost(host, port) {
			continue
		}
		c.web[makeOrigin(o.Scheme, host, port).str] = true
	}
	return c
}

// Requests reports how many requests the call has made.
func (c *Call) Requests() int { return int(c.n.Load()) }

// Redact replaces every credential value the proxy knows (of every service,
// in every encoding it redacts in bodies) with Marker.
func (c *Call) Redact(s string) string { return c.p.red.string(s) }

// target is a checked request.
type target struct {
	svc     *service // nil for a web request
	url     *url.URL
	method  string
	header  http.Header // the step's headers, checked and canonical
	body    []byte
	ctype   string
	sem     chan struct{} // a campus service's
	semKey  string        // or a web origin's, by key
	semSize int
	urlStr  string // url.String(), when known
	u       url.URL
}

func (t *target) name() string {
	if t.svc != nil {
		return t.svc.Name
	}
	return ""
}

func validMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return true
	}
	return false
}

// hget reads a header by its canonical name without canonicalising it
// again (a response's header names are canonical already).
func hget(h http.Header, k string) string {
	if v := h[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Do sends one request under the call's grants and the proxy's rules.
func (c *Call) Do(ctx context.Context, r *Request) (*Response, error) {
	if r == nil {
		return nil, errors.New("no request")
	}
	if n := c.n.Add(1); n > int64(c.p.lim.MaxRequests) {
		return nil, fmt.Errorf("%w: the call made more than %d requests", ErrLimit, c.p.lim.MaxRequests)
	}
	t, err := c.target(r)
	if err != nil {
		return nil, c.redactErr(err)
	}
	if err := acquire(ctx, c.sem); err != nil {
		return nil, err
	}
	defer func() { <-c.sem }()
	s := t.sem
	if s == nil {
		s = c.p.sem(t.semKey, t.semSize)
	}
	if err := acquire(ctx, s); err != nil {
		return nil, err
	}
	defer func() { <-s }()

	retries := 0
	if r.Retry != nil && (t.method == "GET" || t.method == "HEAD" || t.method == "OPTIONS") {
		retries = min(max(r.Retry.Max, 0), c.p.lim.MaxRetries)
	}
	wait := time.Duration(0)
	for attempt := 0; ; attempt++ {
		resp, err := c.attempt(ctx, t)
		if attempt >= retries || !retryable(resp, err) || ctx.Err() != nil {
			return resp, err
		}
		wait = backoff(r.Retry, wait, resp)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return resp, err
		}
		tm := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			tm.Stop()
			return resp, err
		case <-tm.C:
		}
	}
}

func retryable(resp *Response, err error) bool {
	if err != nil {
		var re *RequestError
		return errors.As(err, &re) && !errors.Is(err, ErrRefused) && !errors.Is(err, ErrLimit) &&
			!errors.Is(err, context.Canceled)
	}
	switch resp.Status {
	case 429, 500, 502, 503, 504:
		return true
	}
	return false
}

func backoff(rp *RetryPolicy, prev time.Duration, resp *Response) time.Duration {
	first, most := rp.Backoff, rp.MaxBackoff
	if first <= 0 {
		first = 200 * time.Millisecond
	}
	if most <= 0 {
		most = 2 * time.Second
	}
	w := first
	if prev > 0 {
		w = prev * 2
	}
	if resp != nil {
		if s, err := strconv.Atoi(hget(resp.Header, "Retry-After")); err == nil && s >= 0 {
			w = time.Duration(s) * time.Second
		}
	}
	return min(w, most)
}

// target checks a request against the grants and builds its first URL.
func (c *Call) target(r *Request) (*target, error) {
	t := &target{method: r.Method, body: r.Body, ctype: r.ContentType}
	switch t.method {
	case "":
		t.method = "GET"
	case "GET", "POST":
	default:
		t.method = strings.ToUpper(t.method)
	}
	if !validMethod(t.method) {
		return nil, fmt.Errorf("%w: method %q is not allowed", ErrRefused, r.Method)
	}
	if int64(len(r.Body)) > c.p.lim.MaxRequestBytes {
		return nil, fmt.Errorf("%w: the request body is more than %d bytes", ErrLimit, c.p.lim.MaxRequestBytes)
	}
	if !validHeaderValue(r.ContentType) {
		return nil, fmt.Errorf("%w: the content type has a control character", ErrRefused)
	}
	if len(r.Header) > 0 {
		h, err := c.checkHeader(r.Header)
		if err != nil {
			return nil, err
		}
		t.header = h
	}
	switch {
	case r.Service != "" && r.URL != "":
		return nil, fmt.Errorf("%w: a request has either a service and path or a URL, not both", ErrRefused)
	case r.Service != "":
		return t, c.campusTarget(t, r)
	case r.URL != "":
		return t, c.webTarget(t, r)
	}
	return nil, fmt.Errorf("%w: a request needs a service and path, or a URL", ErrRefused)
}

// checkHeader refuses what a step may not set and returns the header with
// canonical names (h itself when its names are canonical already).
func (c *Call) checkHeader(h http.Header) (http.Header, error) {
	canonical := true
	for k, vs := range h {
		ck := canonicalKey(k)
		if ck != k {
			canonical = false
		}
		if !validToken(k) {
			return nil, fmt.Errorf("%w: %q is not a valid header name", ErrRefused, k)
		}
		if reservedHeader(ck) {
			return nil, fmt.Errorf("%w: a step may not set the %s header (the proxy sets it)", ErrRefused, ck)
		}
		if c.p.authHeaders[ck] {
			return nil, fmt.Errorf("%w: %s is a campus credential header; the proxy attaches it", ErrRefused, ck)
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return nil, fmt.Errorf("%w: the %s header has a control character", ErrRefused, ck)
			}
		}
	}
	if canonical {
		return h, nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		ck := canonicalKey(k)
		out[ck] = append(out[ck], vs...)
	}
	return out, nil
}

func (c *Call) campusTarget(t *target, r *Request) error {
	svc := c.p.services[r.Service]
	if svc == nil {
		if err := c.p.serviceErr[r.Service]; err != nil {
			return err
		}
		return fmt.Errorf("%w: unknown campus service %q (add it to the catalogue with --services)", ErrRefused, r.Service)
	}
	g := c.campus[r.Service]
	if g == nil {
		return fmt.Errorf("%w: the document does not declare campus service %q", ErrRefused, r.Service)
	}
	cp, err := normalisePath(r.Path)
	if err != nil {
		return err
	}
	if !g.allows(cp.decoded) {
		return fmt.Errorf("%w: path %q is outside the paths declared for campus service %q", ErrRefused, cp.decoded, r.Service)
	}
	t.svc = svc
	t.u = url.URL{Scheme: svc.origin.scheme, Host: svc.urlHost, Path: cp.decoded, RawPath: cp.escaped,
		RawQuery: svc.query(cp.query, r.Query)}
	t.url = &t.u
	if t.url.RawQuery != "" {
		t.urlStr = svc.origin.str + cp.escaped + "?" + t.url.RawQuery
	} else {
		t.urlStr = svc.origin.str + cp.escaped
	}
	t.sem = svc.sem
	return nil
}

func (c *Call) webTarget(t *target, r *Request) error {
	u, o, err := c.webURL(r.URL)
	if err != nil {
		return err
	}
	if len(r.Query) > 0 {
		u.RawQuery = joinQuery(u.RawQuery, r.Query, nil)
	}
	t.url = u
	t.semKey = "web:" + o.str
	t.semSize = c.p.lim.ServiceConcurrency
	return nil
}

// webURL checks a web URL against the grants and returns it normalised.
func (c *Call) webURL(raw string) (*url.URL, origin, error) {
	if len(raw) > maxPathBytes {
		return nil, origin{}, fmt.Errorf("%w: the URL is longer than %d bytes", ErrRefused, maxPathBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, origin{}, fmt.Errorf("%w: %q is not a valid URL", ErrRefused, raw)
	}
	return c.checkWeb(u)
}

func (c *Call) checkWeb(u *url.URL) (*url.URL, origin, error) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, origin{}, fmt.Errorf("%w: a web URL must start with https:// or http://", ErrRefused)
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, origin{}, fmt.Errorf("%w: a web URL needs a host", ErrRefused)
	}
	if u.User != nil {
		return nil, origin{}, fmt.Errorf("%w: a web URL may not hold a user name or password", ErrRefused)
	}
	host, err := canonicalHost(u.Hostname())
	if err != nil {
		return nil, origin{}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if ps := u.Port(); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 || ps[0] == '0' {
			return nil, origin{}, fmt.Errorf("%w: bad port %q", ErrRefused, ps)
		}
		port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, origin{}, fmt.Errorf("%w: empty port", ErrRefused)
	}
	o := makeOrigin(u.Scheme, host, port)
	if c.p.isCampusHost(host, port) {
		return nil, origin{}, fmt.Errorf("%w: %s is a campus host; declare it as a campus service, not a web origin", ErrRefused, host)
	}
	if !c.web[o.str] {
		return nil, origin{}, fmt.Errorf("%w: origin %s is not declared in the document's web access", ErrRefused, o.str)
	}
	if strings.ContainsAny(u.Path, "\\") || strings.Contains(strings.ToLower(u.RawPath), "%5c") {
		return nil, origin{}, fmt.Errorf("%w: a web URL path may not hold a backslash", ErrRefused)
	}
	n := &url.URL{Scheme: u.Scheme, Host: urlHost(o), Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	if n.Path == "" {
		n.Path = "/"
	}
	return n, o, nil
}

func urlHost(o origin) string {
	h := o.host
	if strings.IndexByte(h, ':') >= 0 {
		h = "[" + h + "]"
	}
	if (o.scheme == "https" && o.port == 443) || (o.scheme == "http" && o.port == 80) {
		return h
	}
	return h + ":" + strconv.Itoa(o.port)
}

// query builds a campus request's query: the fixed parameters alone when
// the step gives none (no allocation), else joinQuery.
func (s *service) query(raw string, q url.Values) string {
	if raw == "" && len(q) == 0 {
		return s.fixedQuery
	}
	return joinQuery(raw, q, s.Query)
}

// joinQuery joins a raw query, the step's parameters and a service's fixed
// parameters (added only when absent).
func joinQuery(raw string, q url.Values, fixed map[string]string) string {
	parts := make([]string, 0, 3)
	if raw != "" {
		parts = append(parts, raw)
	}
	if len(q) > 0 {
		parts = append(parts, q.Encode())
	}
	if len(fixed) > 0 {
		have, _ := url.ParseQuery(raw)
		add := url.Values{}
		for k, v := range fixed {
			if _, ok := have[k]; ok {
				continue
			}
			if _, ok := q[k]; ok {
				continue
			}
			add.Set(k, v)
		}
		if len(add) > 0 {
			parts = append(parts, add.Encode())
		}
	}
	return strings.Join(parts, "&")
}

func originOf(u *url.URL) string {
	h := u.Host
	if u.Port() == "" || (u.Scheme == "https" && u.Port() == "443") || (u.Scheme == "http" && u.Port() == "80") {
		h = u.Hostname()
		if strings.IndexByte(h, ':') >= 0 {
			h = "[" + h + "]"
		}
	}
	return u.Scheme + "://" + strings.ToLower(h)
}

// attempt sends the request and follows redirects by the proxy's rules.
func (c *Call) attempt(ctx context.Context, t *target) (*Response, error) {
	actx, cancel := context.WithTimeout(ctx, c.p.lim.RequestTimeout)
	defer cancel()
	rt := c.p.webRT
	if t.svc != nil {
		rt = c.p.campusRT
	}
	cur, method, body := t.url, t.method, t.body
	for hop := 0; ; hop++ {
		req := (&http.Request{Method: method, URL: cur, Host: cur.Host, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: c.sign(t, cur, body != nil)}).WithContext(actx)
		if body != nil {
			b := body
			req.Body = io.NopCloser(bytes.NewReader(b))
			req.ContentLength = int64(len(b))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return nil, c.transportErr(ctx, actx, t, cur, err)
		}
		if err := c.absorbCookies(t, cur, resp); err != nil {
			drain(resp)
			return nil, c.redactErr(err)
		}
		if t.svc != nil && t.svc.loginStatus[resp.StatusCode] {
			drain(resp)
			return nil, loginRequired(t.svc.Name)
		}
		loc := hget(resp.Header, "Location")
		if isRedirect(resp.StatusCode) && loc != "" {
			next, err := cur.Parse(loc)
			if err == nil {
				if t.svc != nil && t.svc.matchesLogin(next) {
					drain(resp)
					return nil, loginRequired(t.svc.Name)
				}
				if n := c.follow(t, cur, next); n != nil {
					drain(resp)
					if hop >= c.p.lim.MaxRedirects {
						return nil, fmt.Errorf("%w: more than %d redirects", ErrLimit, c.p.lim.MaxRedirects)
					}
					switch resp.StatusCode {
					case 301, 302, 303:
						if method != "HEAD" && (resp.StatusCode == 303 || method == "POST") {
							method, body = "GET", nil
						}
					}
					cur = n
					continue
				}
			}
		}
		return c.finish(t, cur, resp)
	}
}

func isRedirect(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

func drain(resp *http.Response) {
	io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
}

// follow decides a redirect: a campus request follows only inside its
// origin and declared paths; a web request only to a declared web origin.
// It returns the URL to request next, or nil to hand the redirect to the
// step unfollowed.
func (c *Call) follow(t *target, cur, next *url.URL) *url.URL {
	if next.User != nil {
		return nil
	}
	if t.svc == nil {
		n, _, err := c.checkWeb(next)
		if err != nil {
			return nil
		}
		return n
	}
	if next.Scheme != t.svc.origin.scheme || next.Opaque != "" {
		return nil
	}
	host, err := canonicalHost(next.Hostname())
	if err != nil || host != t.svc.origin.host {
		return nil
	}
	port := t.svc.origin.port
	if ps := next.Port(); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n != port {
			return nil
		}
	} else if port != 443 && next.Scheme == "https" || port != 80 && next.Scheme == "http" {
		return nil
	}
	p := next.EscapedPath()
	if p == "" {
		p = "/"
	}
	if next.RawQuery != "" {
		p += "?" + next.RawQuery
	}
	cp, err := normalisePath(p)
	if err != nil {
		return nil
	}
	if g := c.campus[t.svc.Name]; g == nil || !g.allows(cp.decoded) {
		return nil
	}
	return &url.URL{Scheme: cur.Scheme, Host: cur.Host, Path: cp.decoded, RawPath: cp.escaped,
		RawQuery: t.svc.query(cp.query, nil)}
}

// matchesLogin reports whether u is one of the service's login locations.
func (s *service) matchesLogin(u *url.URL) bool {
	for _, p := range s.loginPaths {
		if strings.HasPrefix(u.Path, p) || (u.RawPath != "" && strings.HasPrefix(u.RawPath, p)) {
			return true
		}
	}
	if len(s.loginURLs) == 0 {
		return false
	}
	o, ep := originOf(u), u.EscapedPath()
	for _, l := range s.loginURLs {
		if o == l.origin && strings.HasPrefix(ep, l.path) {
			return true
		}
	}
	return false
}

const userAgent = "pku-harness/1"

var userAgentValue = []string{userAgent}

var acceptEncoding = []string{"gzip, deflate"}

// sign builds a hop's headers: the step's, then for a campus request the
// service's fixed headers, its session (only its own) and its CSRF header;
// the call's jar cookies for exactly this origin.
func (c *Call) sign(t *target, cur *url.URL, hasBody bool) http.Header {
	h := make(http.Header, len(t.header)+6)
	for k, v := range t.header {
		h[k] = v
	}
	if hasBody && t.ctype != "" {
		h["Content-Type"] = []string{t.ctype}
	}
	var cookies []string
	var jar map[string]string
	c.jarMu.Lock()
	if len(c.jar) > 0 {
		jar = c.jar[originOf(cur)]
	}
	c.jarMu.Unlock()
	if t.svc != nil {
		s := t.svc
		for k, v := range s.fixed {
			h[k] = v
		}
		ss, _ := c.p.keys.Get(s.Name)
		if ss != nil {
			if s.seen.Load() != ss {
				// A session not seen before: redact its values from now on.
				c.p.addSecrets(ss)
				s.seen.Store(ss)
			}
			if s.allCookies {
				for n, v := range ss.Cookies {
					cookies = append(cookies, n+"="+v)
				}
			} else {
				for _, n := range s.Auth.Cookies {
					if v, ok := ss.Cookies[n]; ok {
						cookies = append(cookies, n+"="+v)
					}
				}
			}
			for _, n := range s.headers {
				if v, ok := ss.Headers[n]; ok {
					h[n] = []string{v}
				}
			}
		}
		if s.CSRF.Cookie != "" {
			v, ok, stored := "", false, false
			if ss != nil {
				v, ok = ss.Cookies[s.CSRF.Cookie]
				stored = ok
			}
			if !ok {
				c.jarMu.Lock()
				v, ok = jar[s.CSRF.Cookie]
				c.jarMu.Unlock()
			}
			if ok {
				if d, err := url.PathUnescape(v); err == nil && d != v {
					if stored {
						c.p.red.add(d)
					}
					v = d
				}
				h[canonicalKey(s.CSRF.Header)] = []string{v}
			}
		}
	}
	if len(jar) > 0 {
		c.jarMu.Lock()
		for n, v := range jar {
			if t.svc != nil && t.svc.isAuthCookie(n) {
				continue
			}
			cookies = append(cookies, n+"="+v)
		}
		c.jarMu.Unlock()
	}
	if len(cookies) > 0 {
		sort.Strings(cookies)
		h["Cookie"] = []string{strings.Join(cookies, "; ")}
	}
	h["Accept-Encoding"] = acceptEncoding
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = userAgentValue
	}
	return h
}

// absorbCookies takes the Set-Cookie lines of a response: a session cookie
// of the service is saved to the keystore (and redacted from now on);
// any other cookie goes to the call's jar for this origin only.
func (c *Call) absorbCookies(t *target, cur *url.URL, resp *http.Response) error {
	if len(resp.Header["Set-Cookie"]) == 0 {
		return nil
	}
	org := originOf(cur)
	now := c.p.now()
	var refresh map[string]string
	for _, ck := range resp.Cookies() {
		expired := ck.MaxAge < 0 || (!ck.Expires.IsZero() && ck.Expires.Before(now))
		if t.svc != nil && t.svc.isAuthCookie(ck.Name) {
			if expired || ck.Value == "" {
				continue
			}
			if checkSecretValue(ck.Value) != nil || strings.ContainsAny(ck.Value, ";\" ,\\") {
				continue // too short or odd to be a session: neither stored nor redacted
			}
			c.p.red.add(ck.Value)
			if ss, ok := c.p.keys.Get(t.svc.Name); ok && ss.Cookies[ck.Name] == ck.Value {
				continue
			}
			if refresh == nil {
				refresh = map[string]string{}
			}
			refresh[ck.Name] = ck.Value
			continue
		}
		c.jarMu.Lock()
		m := c.jar[org]
		if m == nil {
			m = map[string]string{}
			c.jar[org] = m
		}
		if expired {
			delete(m, ck.Name)
		} else if len(m) < 50 && len(ck.Value) <= 4096 {
			m[ck.Name] = ck.Value
		}
		c.jarMu.Unlock()
	}
	if refresh != nil {
		if err := c.p.keys.Update(t.svc.Name, refresh); err != nil {
			return fmt.Errorf("cannot save the refreshed session of %q: %v", t.svc.Name, err)
		}
	}
	return nil
}

// finish reads, decodes and redacts the final response.
func (c *Call) finish(t *target, cur *url.URL, resp *http.Response) (*Response, error) {
	defer resp.Body.Close()
	if t.svc != nil && t.svc.matchesLogin(cur) {
		return nil, loginRequired(t.svc.Name)
	}
	body, err := readBody(resp, c.p.lim.MaxResponseBytes)
	if err != nil {
		return nil, &RequestError{Service: t.name(), URL: c.p.red.string(cur.String()), Msg: c.p.red.string(err.Error()), cause: causeOf(err)}
	}
	mt, label := mediaType(resp.Header, body)
	out := &Response{Status: resp.StatusCode, MediaType: mt}
	if textual(mt) {
		out.Body = c.p.red.bytesInPlace(toUTF8(body, mt, label))
	} else {
		out.Binary = true
	}
	if t.svc != nil && len(t.svc.Login.JSON) > 0 && out.Body != nil && jsonExpired(out.Body, t.svc.Login.JSON) {
		return nil, loginRequired(t.svc.Name)
	}
	h := resp.Header
	if ce := hget(h, "Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		delete(h, "Content-Encoding")
		delete(h, "Content-Length")
	}
	for k, vs := range h {
		if strippedResponseHeader(k) || c.p.authHeaders[k] {
			delete(h, k)
			continue
		}
		for i, v := range vs {
			vs[i] = c.p.red.string(v)
		}
	}
	out.Header = h
	if cur == t.url && t.urlStr != "" {
		out.URL = c.p.red.string(t.urlStr)
	} else {
		out.URL = c.p.red.string(cur.String())
	}
	return out, nil
}

// jsonExpired checks a JSON object's top-level fields against the login
// signals.
func jsonExpired(body []byte, sig map[string][]string) bool {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' || !jsonMayMatch(b, sig) {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	for k, vals := range sig {
		raw, ok := m[k]
		if !ok {
			continue
		}
		v := strings.TrimSpace(string(raw))
		var s string
		if json.Unmarshal(raw, &s) == nil {
			v = s
		}
		for _, want := range vals {
			if v == want {
				return true
			}
		}
	}
	return false
}

// jsonMayMatch is a cheap pre-check: some `"key": value` pair anywhere in
// b has a signal value. Only then is the body parsed.
func jsonMayMatch(b []byte, sig map[string][]string) bool {
	for k, vals := range sig {
		key := `"` + k + `"`
		for off := 0; ; {
			i := bytes.Index(b[off:], []byte(key))
			if i < 0 {
				break
			}
			j := off + i + len(key)
			off = j
			for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\r' || b[j] == '\n') {
				j++
			}
			if j >= len(b) || b[j] != ':' {
				continue
			}
			j++
			for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\r' || b[j] == '\n') {
				j++
			}
			rest := b[j:]
			for _, v := range vals {
				if bytes.HasPrefix(rest, []byte(v)) || bytes.HasPrefix(rest, []byte(`"`+v+`"`)) {
					return true
				}
			}
		}
	}
	return false
}

func causeOf(err error) error {
	switch {
	case errors.Is(err, ErrLimit):
		return ErrLimit
	case errors.Is(err, ErrRefused):
		return ErrRefused
	}
	return nil
}

// transportErr turns a transport error into a redacted RequestError.
func (c *Call) transportErr(ctx, actx context.Context, t *target, u *url.URL, err error) error {
	re := &RequestError{Service: t.name(), URL: c.p.red.string(u.String()), cause: causeOf(err)}
	switch {
	case ctx.Err() != nil:
		re.cause = ctx.Err()
		re.Msg = ctx.Err().Error()
		re.Timeout = errors.Is(ctx.Err(), context.DeadlineExceeded)
	case errors.Is(actx.Err(), context.DeadlineExceeded) || isNetTimeout(err):
		re.Timeout = true
		re.Msg = "timed out after " + c.p.lim.RequestTimeout.String()
	default:
		re.Msg = c.p.red.string(err.Error())
	}
	return re
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// redactErr keeps an error's class but redacts its message.
func (c *Call) redactErr(err error) error {
	var lr *LoginRequiredError
	if errors.As(err, &lr) {
		return err
	}
	msg := err.Error()
	red := c.p.red.string(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, cause: causeOf(err)}
}

type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }
