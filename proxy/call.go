package proxy

import (
	"context"
	"errors"
	"fmt"
	"github.com/pkuinfo/harness/internal/netguard"
	"net/http"
	"net/url"
	"strconv"
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
	sent   atomic.Int64 // requests on the wire: every redirect hop and retry
	// refreshed counts the new session values services set in the call.
	refreshed atomic.Int64

	jarMu sync.Mutex
	jar   map[string]map[string]string // origin -> cookie name -> value
}

// NewCall starts a tool call of a plugin with the document's declared
// access. A web origin that is a campus host is never granted.
func (p *Proxy) NewCall(pluginID string, access manifest.Access) *Call {
	return p.Grants(pluginID, access).NewCall()
}

// Grants is a document's declared access compiled for a proxy once (the
// campus services and their path prefixes, the canonical web origins), for
// any number of calls: a host compiles it when it loads the document.
type Grants struct {
	p        *Proxy
	plugin   string
	services []string // the declared campus services, in declaration order
	campus   map[string]*grant
	web      map[string]bool // canonical origins; nil when none
}

// Grants compiles a plugin's declared access for NewCall.
func (p *Proxy) Grants(pluginID string, access manifest.Access) *Grants {
	g := &Grants{p: p, plugin: pluginID, campus: make(map[string]*grant, len(access.Campus))}
	for _, ca := range access.Campus {
		gr := g.campus[ca.Service]
		if gr == nil {
			gr = &grant{}
			g.campus[ca.Service] = gr
			g.services = append(g.services, ca.Service)
		}
		if len(ca.Paths) == 0 {
			gr.any = true
		}
		for _, path := range ca.Paths {
			if cp, err := normalisePath(path); err == nil && cp.query == "" {
				gr.prefixes = append(gr.prefixes, cp.decoded)
			}
		}
	}
	for _, o := range access.Web {
		host, err := netguard.CanonicalHost(o.Host)
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
		if g.web == nil {
			g.web = map[string]bool{}
		}
		g.web[makeOrigin(o.Scheme, host, port).str] = true
	}
	return g
}

// NewCall starts a tool call under the grants: its own cookie jar and
// counters; the grants are shared, read only. The declared services'
// stored sessions are registered with the redactor first.
func (g *Grants) NewCall() *Call {
	p := g.p
	for _, name := range g.services {
		if ss, ok := p.keys.Get(name); ok && !p.services[name].signed(ss) {
			p.addSecrets(ss)
		}
	}
	// The jar is made when first written: most calls have none.
	return &Call{p: p, plugin: g.plugin, campus: g.campus, web: g.web, sem: make(chan struct{}, p.lim.CallConcurrency)}
}

// Requests reports how many requests the call has made.
func (c *Call) Requests() int { return int(c.n.Load()) }

// Redact replaces every credential value the proxy knows (of every service,
// in every encoding it redacts in bodies) with Marker. Only whole values
// and whole encodings are replaced: text that holds a part of one is left
// as it is, so that what a plugin reads back never tells it that it
// guessed a part.
func (c *Call) Redact(s string) string { return c.p.red.string(s) }

// Redact removes every credential the proxy knows from s (every stored
// value from the start, as a call's Redact does), for a host that shows
// text outside a call (harness dev's page).
func (p *Proxy) Redact(s string) string { return p.red.string(s) }

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
	if err := acquire(ctx, s); err != nil {
		return nil, err
	}
	defer func() { <-s }()

	retries := 0
	if r.Retry != nil && (t.method == "GET" || t.method == "HEAD" || t.method == "OPTIONS") {
		retries = min(max(r.Retry.Max, 0), c.p.lim.MaxRetries)
	}
	wait := time.Duration(0)
	var resp *Response
attempts:
	for attempt := 0; ; attempt++ {
		resp, err = c.attempt(ctx, t)
		if attempt >= retries || !retryable(resp, err) || ctx.Err() != nil {
			break
		}
		wait = backoff(r.Retry, wait, resp)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			break
		}
		tm := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			tm.Stop()
			break attempts
		case <-tm.C:
		}
	}
	// The Response lives inside the target: let it keep nothing of the
	// request alive.
	t.body, t.header = nil, nil
	return resp, err
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
