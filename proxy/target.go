package proxy

import (
	"fmt"
	"github.com/pkuinfo/harness/internal/netguard"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unsafe"
)

// target is a checked request.
type target struct {
	svc    *service // nil for a web request
	method string
	header http.Header // the step's headers, checked and canonical
	body   []byte
	ctype  string
	sem    chan struct{} // the campus service's or the web origin's
	urlStr string        // url.String(), when known
	// sentText is what the step put into the request (path, query,
	// headers, body, raw and decoded), built when first needed.
	sentText *string
	u        url.URL
	// checked is the redactor state carriesSecret searched the request
	// with. plain says the first URL is made of nothing but what it
	// searched (the step's path, query or URL) and public parts (a campus
	// service's origin and its whole fixed query, which hold no credential
	// under that state either): a response whose URL is that one, under
	// the same state, shows it as it is. It tells the step nothing it did
	// not write or see already; should it spell a credential across its
	// parts, the step wrote that itself, and the result, the trace and
	// what the step sends next pass the redactor again. A state changed
	// since (a session value the answer set) redacts it.
	checked *redState
	plain   bool
	// resp is the answer Do returns: one allocation with the target; so
	// is its Content-Length header's value.
	resp    Response
	clen    [1]string
	clenBuf [20]byte
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
	if c.carriesSecret(r, t) {
		return nil, fmt.Errorf("%w: the request carries a credential value; steps never hold credentials, the proxy attaches them", ErrRefused)
	}
	switch {
	case r.Service != "" && r.URL != "":
		return nil, fmt.Errorf("%w: a request has either a service and path or a URL, not both", ErrRefused)
	case r.Service != "":
		if err := c.campusTarget(t, r); err != nil {
			return t, err
		}
		return t, c.checkReferer(t)
	case r.URL != "":
		if err := c.webTarget(t, r); err != nil {
			return t, err
		}
		return t, c.checkReferer(t)
	}
	return nil, fmt.Errorf("%w: a request needs a service and path, or a URL", ErrRefused)
}

// checkHeader refuses what a step may not set and returns the header with
// folded canonical names (h itself when its names are canonical already).
// Request headers go by allow-list (internal/netguard.CheckStepHeader):
// names are compared after folding "_" to "-" and case, so X_Forwarded_For
// is X-Forwarded-For, and refused like every name not on the list.
func (c *Call) checkHeader(h http.Header) (http.Header, error) {
	canonical := true
	for k, vs := range h {
		if !validToken(k) {
			return nil, fmt.Errorf("%w: %q is not a valid header name", ErrRefused, k)
		}
		ck, err := netguard.CheckStepHeader(k)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrRefused, err)
		}
		if ck != k {
			canonical = false
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
		ck := netguard.FoldHeaderName(k)
		out[ck] = append(out[ck], vs...)
	}
	return out, nil
}

// checkReferer allows a step's Referer and Origin only for the request's
// own origin: for a campus request, the service's origin or a campus host
// (a page of the service under its public name); for a web request,
// exactly the URL's origin.
func (c *Call) checkReferer(t *target) error {
	for _, k := range []string{"Referer", "Origin"} {
		for _, v := range t.header[k] {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Host == "" {
				return fmt.Errorf("%w: the %s header must be an http(s) URL of the request's own origin", ErrRefused, k)
			}
			host, err := netguard.CanonicalHost(u.Hostname())
			if err != nil {
				return fmt.Errorf("%w: the %s header's host: %v", ErrRefused, k, err)
			}
			o := originOf(u)
			if t.svc != nil {
				port := 443
				if u.Scheme == "http" {
					port = 80
				}
				if ps := u.Port(); ps != "" {
					port, _ = strconv.Atoi(ps)
				}
				if o == t.svc.origin.str || c.p.isCampusHost(host, port) {
					continue
				}
			} else if o == originOf(&t.u) {
				continue
			}
			return fmt.Errorf("%w: the %s header names another origin than the request's (%s)", ErrRefused, k, o)
		}
	}
	return nil
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
	if k := netguard.CampusRangeHeader(t.header); k != "" {
		return fmt.Errorf("%w: a campus request may not ask for a part of a page (%s): a page that shows a session, asked for a piece at a time, would hand a step each piece; only web requests take %s", ErrRefused, k, k)
	}
	cp, err := normalisePath(r.Path)
	if err != nil {
		return err
	}
	if svc.isEntry(cp.decoded) {
		return fmt.Errorf("%w: path %q is a login or hand-off entry point of campus service %q; sessions belong to the host (it signs in and hands them on), a step never requests these paths", ErrRefused, cp.decoded, r.Service)
	}
	if !g.allows(cp.decoded) {
		return fmt.Errorf("%w: path %q is outside the paths declared for campus service %q", ErrRefused, cp.decoded, r.Service)
	}
	t.svc = svc
	t.u = url.URL{Scheme: svc.origin.scheme, Host: svc.urlHost, Path: cp.decoded, RawPath: cp.escaped,
		RawQuery: svc.query(cp.query, r.Query)}
	if t.u.RawQuery != "" {
		t.urlStr = svc.origin.str + cp.escaped + "?" + t.u.RawQuery
	} else {
		t.urlStr = svc.origin.str + cp.escaped
	}
	t.sem = svc.sem
	t.plain = svc.fixedWhole(cp.query, r.Query) && c.p.publicParts(svc, t.checked)
	return nil
}

// fixedWhole reports whether a campus request's query holds the service's
// fixed query whole (or the service has none): no fixed parameter is left
// out because the step's path or parameters name it.
func (s *service) fixedWhole(raw string, q url.Values) bool {
	if len(s.Query) == 0 || raw == "" && len(q) == 0 {
		return true
	}
	var have url.Values
	if raw != "" {
		have, _ = url.ParseQuery(raw)
	}
	for k := range s.Query {
		if _, ok := have[k]; ok {
			return false
		}
		if _, ok := q[k]; ok {
			return false
		}
	}
	return true
}

// publicParts reports whether svc's origin and fixed query hold no
// credential under st, remembered for the last state it was asked about.
func (p *Proxy) publicParts(svc *service, st *redState) bool {
	if st == nil {
		return false
	}
	if v, ok := p.public.Load(svc); ok && v.(*redState) == st {
		return true
	}
	if st.holds(svc.origin.str) || st.holds(svc.urlHost) || st.holds(svc.fixedQuery) {
		return false
	}
	p.public.Store(svc, st)
	return true
}

func (c *Call) webTarget(t *target, r *Request) error {
	u, o, err := c.webURL(r.URL)
	if err != nil {
		return err
	}
	if len(r.Query) > 0 {
		u.RawQuery = joinQuery(u.RawQuery, r.Query, nil)
	}
	t.u = *u
	t.sem = c.p.sem(o.str, c.p.lim.ServiceConcurrency)
	// The step's URL (its declared origin, canonical) and its parameters.
	t.plain = t.checked != nil
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
	host, err := netguard.CanonicalHost(u.Hostname())
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

// carriesSecret reports whether what a step put into a request (its path or
// URL, query, header names and values, body) holds a credential value the
// proxy knows, in any form the redactor finds, also under several layers
// of escapes (a URL-encoded JSON escape). A server may echo a
// credential in a form the redactor cannot predict (reversed, hex, split
// over two responses) and a step may undo that in jq; such a value must
// never leave again, to a web origin or to another campus service.
func (c *Call) carriesSecret(r *Request, t *target) bool {
	st := c.p.red.st.Load()
	t.checked = st
	if len(st.pats) == 0 {
		return false
	}
	has := st.holds
	if has(r.Path) || has(r.URL) || has(r.ContentType) ||
		(len(r.Body) > 0 && has(unsafe.String(unsafe.SliceData(r.Body), len(r.Body)))) {
		return true
	}
	for k, vs := range r.Query {
		if has(k) {
			return true
		}
		for _, v := range vs {
			if has(v) {
				return true
			}
		}
	}
	for k, vs := range r.Header {
		if c.p.red.foldedMatch(k) {
			return true
		}
		for _, v := range vs {
			if has(v) {
				return true
			}
		}
	}
	return false
}
