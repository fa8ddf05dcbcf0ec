package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/pkuinfo/harness/internal/netguard"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// attempt sends the request and follows redirects by the proxy's rules.
func (c *Call) attempt(ctx context.Context, t *target) (*Response, error) {
	// The attempt's own deadline, unless the caller's comes first (as the
	// interpreter's per-request deadline does): then a timer of our own
	// would never fire first and is not worth its cost.
	actx := ctx
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.p.lim.RequestTimeout {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.p.lim.RequestTimeout)
		defer cancel()
	}
	rt := c.p.webRT
	if t.svc != nil {
		rt = c.p.campusRT
	}
	cur, method, body := &t.u, t.method, t.body
	for hop := 0; ; hop++ {
		req := (&http.Request{Method: method, URL: cur, Host: cur.Host, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: c.sign(t, cur, body != nil)}).WithContext(actx)
		if body != nil {
			b := body
			req.Body = io.NopCloser(bytes.NewReader(b))
			req.ContentLength = int64(len(b))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		}
		// Every hop and every retry is a request on the wire: together
		// they stay within MaxRequests, however a server redirects.
		if c.sent.Add(1) > int64(c.p.lim.MaxRequests) {
			return nil, fmt.Errorf("%w: the call sent more than %d requests (redirects and retries included)", ErrLimit, c.p.lim.MaxRequests)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return nil, c.transportErr(ctx, actx, t, cur, err)
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			// The proxy never asks for an upgrade. The body of a 101 is
			// the raw connection, which no deadline closes: reading it
			// would last as long as the server holds it open.
			resp.Body.Close()
			return nil, &RequestError{Service: t.name(), URL: c.p.red.string(cur.String()), cause: ErrRefused,
				Msg: "the server switched protocols (101 Switching Protocols), which the proxy never asks for"}
		}
		if err := c.absorbCookies(t, req, resp); err != nil {
			drain(resp)
			return nil, c.redactErr(err)
		}
		if t.svc != nil {
			// Every header of every hop, whatever the status: a hand-off
			// is registered before anything of the answer is shown.
			if err := c.absorbHandoffHeaders(t, resp.Header); err != nil {
				drain(resp)
				return nil, err
			}
		}
		if t.svc != nil && t.svc.loginStatus[resp.StatusCode] {
			drain(resp)
			return nil, loginRequired(t.svc.Name)
		}
		loc := hget(resp.Header, "Location")
		if isRedirect(resp.StatusCode) && loc != "" {
			// Decided on the Location as the step sees it, each known
			// credential (this hop's hand-offs included) one marker: a
			// session's bytes right after text the step had the server
			// echo ("/iaaa/logi" before an "n", a quote or "#" in a query)
			// must not decide whether it is followed.
			seen := loc
			if t.svc != nil {
				seen = c.p.red.string(loc)
			}
			next, err := cur.Parse(seen)
			if err == nil {
				if t.svc != nil && t.svc.matchesLogin(next) {
					drain(resp)
					return nil, loginRequired(t.svc.Name)
				}
				n := c.follow(t, cur, next)
				if n != nil && seen != loc {
					// Followed as the server wrote it, when that passes
					// the same rules; a credential whose own bytes break
					// them (a ";" in a query, a "%2F" or "//" in a path)
					// leaves the redirect to the step unfollowed, as any
					// the rules refuse.
					if raw, err := cur.Parse(loc); err != nil {
						n = nil
					} else {
						n = c.follow(t, cur, raw)
					}
				}
				if n != nil {
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
	host, err := netguard.CanonicalHost(next.Hostname())
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
	if g := c.campus[t.svc.Name]; g == nil || !g.allows(cp.decoded) || t.svc.isEntry(cp.decoded) {
		return nil
	}
	return &url.URL{Scheme: cur.Scheme, Host: cur.Host, Path: cp.decoded, RawPath: cp.escaped,
		RawQuery: t.svc.query(cp.query, nil)}
}

// seenURL is cur as the step sees it: a redirect's URL with each known
// credential one marker, so that whether it is a login location does not
// depend on a session's bytes after text the step had the server echo.
// The step's own first URL holds none.
func (c *Call) seenURL(t *target, cur *url.URL) *url.URL {
	if cur == &t.u {
		return cur
	}
	s := cur.String()
	if r := c.p.red.string(s); r != s {
		if u, err := url.Parse(r); err == nil {
			return u
		}
	}
	return cur
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

// absorbCookies takes the Set-Cookie lines of a response. The keystore
// changes only by the host's refresh rule, which a plugin cannot steer: a
// new value for a cookie the stored session already holds, set by the
// service on a path that is not an entry point, in answer to a request
// that carried the stored value and named no hand-off parameter (token,
// ticket, ...). Any other cookie, also one named like a session cookie
// (a new name, no stored session, an answer the rule does not take), goes
// to the call's jar for this origin only: it may serve the rest of the
// call, and never reaches another call or the keystore. A session
// cookie's new value the step did not send is a credential from then on.
func (c *Call) absorbCookies(t *target, req *http.Request, resp *http.Response) error {
	if len(resp.Header["Set-Cookie"]) == 0 {
		return nil
	}
	cur := req.URL
	org := originOf(cur)
	now := c.p.now()
	var refresh map[string]string
	var fresh []string // session values the redactor does not know yet
	var stored *ServiceSecrets
	mayStore := false
	if t.svc != nil {
		stored, _ = c.p.keys.Get(t.svc.Name)
		mayStore = stored != nil && c.mayRefresh(t, req)
	}
	cks := resp.Cookies()
	// A later line for the same session cookie replaces an earlier one,
	// as in a browser: only the last counts. So a response repeating a
	// session cookie with thousands of values registers one, not thousands
	// (each new credential value rebuilds the redactor's patterns).
	var last map[string]int
	if t.svc != nil {
		for i, ck := range cks {
			if t.svc.isSessionCookie(stored, ck.Name) {
				if last == nil {
					last = map[string]int{}
				}
				last[ck.Name] = i
			}
		}
	}
	for i, ck := range cks {
		expired := ck.MaxAge < 0 || (!ck.Expires.IsZero() && ck.Expires.Before(now))
		if t.svc != nil && t.svc.isSessionCookie(stored, ck.Name) {
			if last[ck.Name] != i || expired || ck.Value == "" {
				continue
			}
			if checkSecretValue(ck.Value) != nil || strings.ContainsAny(ck.Value, ";\" ,\\") {
				continue // too short or odd to be a session: neither stored nor redacted
			}
			if !c.p.red.knows(ck.Value) && !c.stepSent(t, ck.Value) {
				fresh = append(fresh, ck.Value)
			}
			if stored != nil {
				if old, held := stored.Cookies[ck.Name]; held {
					if old == ck.Value {
						continue
					}
					if mayStore && carriedCookie(req, ck.Name, old) {
						if refresh == nil {
							refresh = map[string]string{}
						}
						refresh[ck.Name] = ck.Value
						continue
					}
				}
			}
		}
		c.jarMu.Lock()
		m := c.jar[org]
		if m == nil {
			if c.jar == nil {
				c.jar = map[string]map[string]string{}
			}
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
	if len(fresh) > 0 {
		// Each new value rebuilds the redactor's patterns, at a cost that
		// grows with the values it holds: a service that sets new session
		// values on every response, many at a time, is stopped before the
		// call spends its time there.
		if n := c.refreshed.Add(int64(len(fresh))); n > maxRefreshes {
			return fmt.Errorf("%w: campus service %q set new session values more than %d times in one call", ErrLimit, t.svc.Name, maxRefreshes)
		}
		c.p.red.addCookie(fresh...)
	}
	if refresh != nil {
		if err := c.p.keys.Update(t.svc.Name, refresh); err != nil {
			return fmt.Errorf("cannot save the refreshed session of %q: %v", t.svc.Name, err)
		}
	}
	return nil
}

// mayRefresh is the part of the refresh rule that depends on the request:
// the hop's path is no entry point, and neither the step's request nor
// the hop names a hand-off parameter (a step that sends someone's ticket
// to an ordinary path must not get that account's session stored).
func (c *Call) mayRefresh(t *target, req *http.Request) bool {
	if t.svc.isEntry(req.URL.Path) {
		return false
	}
	if namesHandoff(req.URL.RawQuery) || namesHandoff(t.u.RawQuery) || namesHandoff(t.u.Path) {
		return false
	}
	return len(t.body) == 0 || !namesHandoff(string(t.body))
}

// carriedCookie reports whether the request's Cookie header held name=value.
func carriedCookie(req *http.Request, name, value string) bool {
	want := name + "=" + value
	for _, line := range req.Header["Cookie"] {
		for _, part := range strings.Split(line, ";") {
			if strings.TrimSpace(part) == want {
				return true
			}
		}
	}
	return false
}

// isHandoffName reports whether a parameter or field name is one that
// carries a session hand-off: a token, a ticket, a JWT.
func isHandoffName(k string) bool {
	var buf [64]byte
	w, ok := foldName(k, &buf)
	if !ok {
		return false
	}
	switch string(w) {
	case "st", "sid", "session", "sessionid", "jsessionid":
		return true
	}
	return strictHandoffWord(w)
}

// foldName is a parameter or header name in lower case without "-", "_"
// and ".", written into b (no allocation on the scan's path); names shorter
// than 2 or longer than 64 bytes are none.
func foldName(k string, b *[64]byte) ([]byte, bool) {
	if len(k) < 2 || len(k) > 64 {
		return nil, false
	}
	n := 0
	for i := 0; i < len(k); i++ {
		ch := k[i]
		if ch == '-' || ch == '_' || ch == '.' {
			continue
		}
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		b[n] = ch
		n++
	}
	return b[:n], true
}

// strictHandoffWord reports whether a folded name is a token's, a ticket's
// or a JWT's.
func strictHandoffWord(w []byte) bool {
	switch string(w) {
	case "jwt", "ssoticketid", "synjonesauth", "authorization", "bearer":
		return true
	}
	return bytes.HasSuffix(w, []byte("token")) || bytes.HasSuffix(w, []byte("ticket")) || bytes.HasSuffix(w, []byte("jwt"))
}

// namesHandoff reports whether s (a query, a path, a form or JSON body)
// names a hand-off parameter: such a name followed by "=" or ":" (a
// quote between them allowed).
func namesHandoff(s string) bool {
	for i := 0; i < len(s); {
		if !wordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && wordByte(s[j]) {
			j++
		}
		k := j
		if k < len(s) && (s[k] == '"' || s[k] == '\'') {
			k++
		}
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		if k < len(s) && (s[k] == '=' || s[k] == ':') && isHandoffName(s[i:j]) {
			return true
		}
		i = j
	}
	return false
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// stepSent reports whether v is (or lies inside) something the step put
// into its request: its path, query, header values or body, as sent or
// once decoded. Such a value is the step's own choice; registering it as
// a credential would let the marker's presence answer the step's
// questions.
func (c *Call) stepSent(t *target, v string) bool {
	if t.sentText == nil {
		var b strings.Builder
		add := func(s string) {
			b.WriteString(s)
			b.WriteByte(0)
			if d, err := url.QueryUnescape(s); err == nil && d != s {
				b.WriteString(d)
				b.WriteByte(0)
			}
			if d, err := url.PathUnescape(s); err == nil && d != s {
				b.WriteString(d)
				b.WriteByte(0)
			}
		}
		add(t.u.EscapedPath())
		add(t.u.Path)
		add(t.u.RawQuery)
		for _, vs := range t.header {
			for _, x := range vs {
				add(x)
			}
		}
		if len(t.body) > 0 {
			add(string(t.body))
		}
		s := b.String()
		t.sentText = &s
	}
	return v != "" && strings.Contains(*t.sentText, v)
}

// minHandoffLen is the shortest value taken for a hand-off credential
// when nothing names it one (a long parameter value, a bare "?TICKET", a
// ticket-shaped path segment): tickets and tokens are long, page numbers
// and ids short. minNamedHandoffLen is the shortest one under a hand-off
// name (token=, "ticket":, an X-Auth-Token header).
const (
	minHandoffLen      = 16
	minNamedHandoffLen = 8
	maxHandoffDepth    = 3 // URLs nested in parameters of URLs
)

// handoffs collects the hand-off credentials of one campus answer: single
// sign-on hands a ticket or a token on in a redirect's query, path or
// fragment, a Refresh or Link header, a page's meta refresh, script or
// auto-posting form, or a login answer's JSON field, as the portal's
// hand-off to the card service does ("?token=…", then
// "?synjones-auth=<JWT>"). Such a value is a session in all but name: it is
// registered with the redactor before the step sees the answer, unless the
// step sent it itself (then it is the step's own choice, and registering
// it would let the marker answer the step's questions). The proxy still
// follows a redirect with it when its rules allow; a step sees it only as
// the marker and can send it nowhere.
type handoffs struct {
	c     *Call
	t     *target
	fresh []string
	// The values looked at (few per answer): the first ones in an array
	// inside the struct, so that a handoffs on the stack does not
	// allocate (appending to a slice field through the pointer would move
	// it to the heap), more in a slice.
	seen  [8]string
	nseen int
	more  []string
	// unread is set when a JSON hand-off field's value was not read (no
	// closing quote within 16 KiB): the answer is refused.
	unread bool
	// fields counts the JSON hand-off fields with a value not looked at
	// before; tooMany is set past maxHandoffCandidates: the answer is
	// refused (each value is looked for in the step's text, so reading
	// any number would cost the answer's size times the step's).
	fields  int
	tooMany bool
}

// saw reports whether v was looked at already.
func (h *handoffs) saw(v string) bool {
	return slices.Contains(h.seen[:h.nseen], v) || slices.Contains(h.more, v)
}

// remember notes v as looked at, up to 512 values.
func (h *handoffs) remember(v string) {
	switch {
	case h.nseen < len(h.seen):
		h.seen[h.nseen] = v
		h.nseen++
	case len(h.more) < 512-len(h.seen):
		h.more = append(h.more, v)
	}
}

func (h *handoffs) add(v string, named bool) {
	if strings.Contains(v, Marker) {
		// The scan reads the answer redacted (absorbHandoffHeaders,
		// finish): a credential the proxy knows is one marker, never a
		// piece of a value. What stands beside it is taken on its own.
		for piece := range strings.SplitSeq(v, Marker) {
			h.add1(piece, named)
		}
		return
	}
	h.add1(v, named)
}

func (h *handoffs) add1(v string, named bool) {
	if len(h.fresh) > maxRefreshes {
		// The answer is refused already (registerHandoffs): no value
		// more is looked for in the step's text, which costs the text's
		// size each (a header block of 60 KiB of new tokens beside a
		// 1 MiB request body held a core 1.6 s).
		return
	}
	v = strings.TrimSpace(v)
	if len(v) > 6 && strings.EqualFold(v[:7], "bearer ") {
		v = strings.TrimSpace(v[7:])
	}
	min := minHandoffLen
	if named {
		min = minNamedHandoffLen
	}
	if len(v) < min || h.saw(v) || checkSecretValue(v) != nil {
		return
	}
	h.remember(v)
	if h.c.p.red.knows(v) || h.c.stepSent(h.t, v) {
		return
	}
	// A copy: v may point into the answer's bytes, which are redacted in
	// place next.
	h.fresh = append(h.fresh, strings.Clone(v))
}

// unescapeValue decodes a parameter value as a server would, once.
func unescapeValue(v string) string {
	if strings.IndexByte(v, '%') < 0 && strings.IndexByte(v, '+') < 0 {
		// What QueryUnescape returns for it, found with two vectorised
		// scans rather than its loop over every byte.
		return v
	}
	if d, err := url.QueryUnescape(v); err == nil {
		return d
	}
	return v
}

// value takes one parameter value, as written and decoded; a value that
// is itself a URL is read as one.
func (h *handoffs) value(k, v string, depth int) {
	d := unescapeValue(v)
	if looksURL(d) {
		h.url(d, depth+1)
		return
	}
	named := isStrictHandoffName(k)
	h.add(d, named)
	if d != v {
		h.add(v, named)
	}
}

func looksURL(s string) bool {
	return strings.Contains(s, "://") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "?") || strings.HasPrefix(s, "#")
}

// url reads a URL or URL reference: the path's segments (a ticket in the
// path, a ";jsessionid=" parameter), the query, a bare "?TICKET" and the
// fragment, also a fragment route ("#/x?token=…").
func (h *handoffs) url(s string, depth int) {
	if depth > maxHandoffDepth {
		return
	}
	path, rest := s, ""
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		path, rest = s[:i], s[i:]
	}
	if j := strings.Index(path, "://"); j >= 0 {
		p := path[j+3:]
		if k := strings.IndexByte(p, '/'); k >= 0 {
			path = p[k:]
		} else {
			path = ""
		}
	}
	h.path(path, depth)
	h.params(rest, depth, &querySeps)
}

// path takes ticket-shaped segments and segment parameters of a path.
func (h *handoffs) path(p string, depth int) {
	for seg := range strings.SplitSeq(p, "/") {
		name, params, _ := strings.Cut(seg, ";")
		if d := unescapeValue(name); ticketShaped(d) {
			h.add(d, false)
		}
		if params != "" {
			h.params(params, depth, &segmentSeps)
		}
	}
}

// params takes k=v pairs and bare values of a query, a fragment or a
// header value, split at the bytes of sep (all ASCII: a byte of a UTF-8
// sequence is never one, so this is strings.FieldsFunc at those runes).
func (h *handoffs) params(s string, depth int, sep *byteSet) {
	for i := 0; i < len(s); {
		part, next := nextField(s, i, sep)
		if part != "" {
			h.param(part, depth)
		}
		i = next
	}
}

// nextField is the field of s at or after i (between bytes of sep) and
// where to look for the next one; "" when only separators are left.
func nextField(s string, i int, sep *byteSet) (string, int) {
	for i < len(s) && sep[s[i]] {
		i++
	}
	j := i
	for j < len(s) && !sep[s[j]] {
		j++
	}
	return s[i:j], j
}

// param takes one field of params.
func (h *handoffs) param(part string, depth int) {
	k, v, eq := strings.Cut(part, "=")
	if !eq {
		if strings.HasPrefix(part, "/") {
			h.path(part, depth) // a fragment route
			return
		}
		if d := unescapeValue(part); ticketShaped(d) {
			h.add(d, false)
		}
		return
	}
	h.value(strings.TrimSpace(k), strings.Trim(v, " \t\"'"), depth)
}

// byteSet marks the bytes a text is split at.
type byteSet [256]bool

func bytesOf(s string) (b byteSet) {
	for i := 0; i < len(s); i++ {
		b[s[i]] = true
	}
	return b
}

// The separators of a query or fragment, of a path segment's parameters,
// of a meta refresh's content, and of any header value (a Refresh's
// "0; url=…", a Link's "<…?ticket=…>; rel=next", "a=…, b=…").
var (
	querySeps   = bytesOf("?&;#")
	segmentSeps = bytesOf(";")
	refreshSeps = bytesOf("; ?&#")
	headerSeps  = bytesOf("?&;#,<>\"' \t")
)

// ticketPunct are the bytes other than letters and digits a ticket or
// token may hold.
var ticketPunct = bytesOf("-._~+/=")

// ticketShaped reports whether a value nothing names could be a ticket or
// token: long, of token characters only, with letters and digits.
func ticketShaped(s string) bool {
	if len(s) < minHandoffLen || len(s) > 4096 {
		return false
	}
	letter, digit := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9':
			digit = true
		case ticketPunct[c]:
		default:
			return false
		}
	}
	return letter && digit
}

// isStrictHandoffName reports whether a parameter, field or header name
// names a hand-off value: a token, a ticket, a JWT.
func isStrictHandoffName(k string) bool {
	var buf [64]byte
	w, ok := foldName(k, &buf)
	return ok && strictHandoffWord(w)
}

// structuralHeader reports whether a (canonical) response header only
// describes the answer and never carries a hand-off.
func structuralHeader(k string) bool {
	switch k {
	case "Date", "Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Cache-Control",
		"Expires", "Last-Modified", "Etag", "Server", "Vary", "Connection", "Keep-Alive", "Transfer-Encoding",
		"Accept-Ranges", "Age", "Pragma", "X-Content-Type-Options", "Strict-Transport-Security",
		"X-Frame-Options", "X-Xss-Protection", "Referrer-Policy", "Alt-Svc", "Retry-After", "Set-Cookie", "Set-Cookie2":
		return true
	}
	return strings.HasPrefix(k, "Access-Control-")
}

// absorbHandoffHeaders registers the hand-offs of every header of a
// campus answer: Location and Content-Location on any status, parseable
// or not; Refresh; Link; any header named for a token or ticket; a
// parameter of any other header.
func (c *Call) absorbHandoffHeaders(t *target, hdr http.Header) error {
	h := &handoffs{c: c, t: t}
	for k, vs := range hdr {
		if structuralHeader(k) {
			continue
		}
		// Each value whole, never a cut of it (the header block is at most
		// MaxHeaderBytes): a cut would end inside a session the value
		// holds, where the step's echoed text before it chose, and
		// register a start of the session.
		for _, v := range vs {
			// Read as the step will see it, each known credential one
			// marker: where the value splits, and so what it registers,
			// must not depend on the bytes of a session it echoes (a
			// quote or "&" in it, right after the step's own text).
			v = c.p.red.string(v)
			switch {
			case k == "Location" || k == "Content-Location":
				h.url(strings.TrimSpace(v), 0)
			case isStrictHandoffName(k):
				h.add(v, true)
			}
			// Every header also as parameters: "0; url=/x?token=…",
			// "<https://…?ticket=…>; rel=next", "a=…, b=…".
			h.params(v, 0, &headerSeps)
		}
	}
	return c.registerHandoffs(h)
}

func (c *Call) registerHandoffs(h *handoffs) error {
	if len(h.fresh) == 0 {
		return nil
	}
	if n := c.refreshed.Add(int64(len(h.fresh))); n > maxRefreshes {
		return fmt.Errorf("%w: campus service %q handed on new credentials more than %d times in one call", ErrLimit, h.t.svc.Name, maxRefreshes)
	}
	var more []string
	for _, v := range h.fresh {
		if e := url.QueryEscape(v); e != v && checkSecretValue(e) == nil {
			more = append(more, e)
		}
	}
	c.p.red.addAll(h.fresh, more)
	return nil
}

var (
	// A meta refresh's content, a script's navigation, a form's action
	// and its hidden inputs, a JSON string field.
	metaRefreshRE = regexp.MustCompile(`(?is)<meta\b[^>]*http-equiv\s*=\s*["']?refresh[^>]*>`)
	contentAttrRE = regexp.MustCompile(`(?is)\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)
	// The script's URL is taken whole, up to its closing quote, or not at
	// all: a cut of it (a window of so many characters) would end inside
	// a session it holds, at a point the page's text before it (the
	// step's own, echoed) chose, and register a start of the session.
	scriptNavRE  = regexp.MustCompile("(?i)(?:location(?:\\s*\\.\\s*href)?\\s*=|location\\s*\\.\\s*(?:replace|assign)\\s*\\(|window\\s*\\.\\s*open\\s*\\()\\s*[\"'`]([^\"'`]+)[\"'`]")
	formRE       = regexp.MustCompile(`(?is)<form\b[^>]*>.*?(?:</form\s*>|$)`)
	actionAttrRE = regexp.MustCompile(`(?is)\baction\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)
	inputRE      = regexp.MustCompile(`(?is)<input\b[^>]*>`)
	nameAttrRE   = regexp.MustCompile(`(?is)\bname\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)
	valueAttrRE  = regexp.MustCompile(`(?is)\bvalue\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)
	hiddenRE     = regexp.MustCompile(`(?is)\btype\s*=\s*["']?hidden`)
	autoSubmitRE = regexp.MustCompile(`(?is)\.submit\s*\(|\bonload\s*=|requestSubmit\s*\(`)
)

// jsonHandoffFields takes every JSON string field of body whose key holds
// one of the words of g and is a hand-off name ("token": "…",
// "access_token" : "…"), without a regular expression over the whole body:
// only where a word occurs is the key and its value read. The words of a
// group share their rarest byte, so one vectorised scan for it serves them
// all; each word is taken as its own scan would (jsonField), from where
// that word's last field ended.
func jsonHandoffFields(body []byte, g *wordGroup, h *handoffs) {
	var next [maxGroupWords]int // per word: where its next occurrence may start
	var done [maxGroupWords]bool
	left := len(g.ws)
	for off := 0; off < len(body) && left > 0; {
		i := bytes.IndexByte(body[off:], g.c)
		if i < 0 {
			return
		}
		i += off
		off = i + 1
		for k := range g.ws {
			w := &g.ws[k]
			s := i - w.a
			if done[k] || s < next[k] || s+len(w.s) > len(body) || string(body[s:s+len(w.s)]) != w.s {
				continue
			}
			n, stop := jsonField(body, s, len(w.s), h)
			next[k] = n
			if stop {
				done[k] = true
				left--
			}
		}
	}
}

// jsonField takes the field whose key holds a word at body[i:i+n], if it
// is one, and returns where the word's next occurrence may start; stop
// when the rest of body holds no key's end.
func jsonField(body []byte, i, n int, h *handoffs) (next int, stop bool) {
	next = i + n
	lo := max(0, i-64)
	ks := bytes.LastIndexByte(body[lo:i], '"')
	if ks < 0 {
		return next, false
	}
	ks += lo + 1
	ke := bytes.IndexByte(body[i:], '"')
	if ke < 0 {
		return next, true
	}
	ke += i
	if !isStrictHandoffName(unsafe.String(unsafe.SliceData(body[ks:ke]), ke-ks)) {
		return next, false
	}
	j := ke + 1
	for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\r' || body[j] == '\n') {
		j++
	}
	if j >= len(body) || body[j] != ':' {
		return next, false
	}
	j++
	for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\r' || body[j] == '\n') {
		j++
	}
	if j >= len(body) || body[j] != '"' {
		return next, false
	}
	vs := j + 1
	esc := false
	ve := -1
	for k := vs; k < len(body) && k < vs+16<<10; k++ {
		if body[k] == '\\' {
			esc = true
			k++
			continue
		}
		if body[k] == '"' {
			ve = k
			break
		}
	}
	if ve < 0 {
		// Not closed within 16 KiB, or never: the value is not read, so
		// the answer is refused (the step's echoed text before a ticket
		// would otherwise choose to leave the ticket unread).
		h.unread = true
		return next, true
	}
	// (A view of the answer's bytes: add copies what it keeps beyond
	// this scan.)
	v := unsafe.String(unsafe.SliceData(body[vs:ve]), ve-vs)
	if esc {
		var d string
		if json.Unmarshal(body[vs-1:ve+1], &d) == nil {
			v = d
		}
	}
	if len(v) >= minNamedHandoffLen && !h.saw(v) {
		if h.fields++; h.fields > maxHandoffCandidates {
			h.tooMany = true
			return next, true
		}
	}
	h.add(v, true)
	return ve + 1, false
}

func attr(re *regexp.Regexp, tag string) string {
	m := re.FindStringSubmatch(tag)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1] + m[2] + m[3])
}

// maxHandoffCandidates bounds the meta refreshes, the script navigations
// and the auto-posting forms absorbHandoffBody reads in one answer, each;
// maxHandoffInputs the inputs of all its forms. An answer with more is
// refused (tooManyHandoffs), never read in part: the scan stopping after
// so many would leave the candidates past them unread, and a page that
// echoes the step's text (never registered) that many times before the
// real ticket would hand the ticket to the step whole. Reading every
// candidate instead would make the work per answer grow with its size
// times the step's sent text (each new value is looked for in it); the
// bounds keep it fixed, far above what a campus page holds (a few, or a
// list whose rows navigate by onclick="location.href=…").
const (
	maxHandoffCandidates = 1024
	maxHandoffInputs     = 4096
)

// tooManyHandoffs is the refusal of an answer with more hand-off
// candidates of a kind than the scan reads. Its text is fixed (the
// service's name, the bound, the kind): it holds none of the answer's
// bytes, so no credential's, and whether it comes depends on how many
// candidates the page's markup holds, which the step can make as many as
// it likes without learning anything.
func tooManyHandoffs(t *target, max int, kind string) error {
	return fmt.Errorf("%w: campus service %q answered with more than %d %s; the proxy reads every hand-off of an answer before a step sees it, and refuses an answer with more", ErrLimit, t.svc.Name, max, kind)
}

// absorbHandoffBody registers the hand-offs of a campus answer's text
// before it is redacted and shown: a meta refresh, a script's
// location.href / location.replace( / window.location = / window.open(,
// an auto-posting form's action and hidden inputs, and a JSON string
// field named for a token, ticket or JWT. A cheap look for the words
// comes first: most answers hold none of them.
func (c *Call) absorbHandoffBody(t *target, body []byte) error {
	if len(body) == 0 {
		return nil
	}
	s := unsafe.String(unsafe.SliceData(body), len(body))
	h := &handoffs{c: c, t: t}
	// Every match of the meta refresh and form patterns holds a "<",
	// every match of the script pattern a "=" or a "(": a body without
	// them (most JSON answers) is not searched for their words.
	lt := bytes.IndexByte(body, '<') >= 0
	if lt && refreshWord.in(body) {
		ms := metaRefreshRE.FindAllString(s, maxHandoffCandidates+1)
		if len(ms) > maxHandoffCandidates {
			return tooManyHandoffs(t, maxHandoffCandidates, "meta refreshes")
		}
		for _, m := range ms {
			h.params(attr(contentAttrRE, m), 0, &refreshSeps)
		}
	}
	if (bytes.IndexByte(body, '=') >= 0 || bytes.IndexByte(body, '(') >= 0) && containsAny(body, navWords) {
		ms := scriptNavRE.FindAllStringSubmatch(s, maxHandoffCandidates+1)
		if len(ms) > maxHandoffCandidates {
			return tooManyHandoffs(t, maxHandoffCandidates, "script navigations")
		}
		for _, m := range ms {
			if len(m[1]) > maxPathBytes {
				// No URL the proxy would follow, and never cut: the answer
				// is refused, not read in part (a ticket after the step's
				// echoed text in it would reach the step unread).
				return fmt.Errorf("%w: campus service %q answered with a script navigation longer than %d bytes; the proxy reads every hand-off of an answer whole before a step sees it, and refuses an answer with a longer one", ErrLimit, t.svc.Name, maxPathBytes)
			}
			h.url(html.UnescapeString(unescapeJS(m[1])), 0)
		}
	}
	if lt && formWord.in(body) && autoSubmitRE.MatchString(s) {
		fs := formRE.FindAllString(s, maxHandoffCandidates+1)
		if len(fs) > maxHandoffCandidates {
			return tooManyHandoffs(t, maxHandoffCandidates, "forms")
		}
		inputs := 0
		for _, f := range fs {
			if open := strings.IndexByte(f, '>'); open >= 0 {
				if a := attr(actionAttrRE, f[:open+1]); a != "" {
					h.url(a, 0)
				}
			}
			ins := inputRE.FindAllString(f, maxHandoffInputs-inputs+1)
			if inputs += len(ins); inputs > maxHandoffInputs {
				return tooManyHandoffs(t, maxHandoffInputs, "form inputs")
			}
			for _, in := range ins {
				if hiddenRE.MatchString(in) {
					h.add(attr(valueAttrRE, in), isStrictHandoffName(attr(nameAttrRE, in)))
				}
			}
		}
	}
	for i := range fieldGroups {
		jsonHandoffFields(body, &fieldGroups[i], h)
	}
	if h.tooMany {
		return tooManyHandoffs(t, maxHandoffCandidates, "token, ticket or JWT fields")
	}
	if h.unread {
		return fmt.Errorf("%w: campus service %q answered with a token, ticket or JWT field whose string is not closed within 16 KiB; the proxy reads every hand-off of an answer whole before a step sees it, and refuses an answer with a longer one", ErrLimit, t.svc.Name)
	}
	return c.registerHandoffs(h)
}

// unescapeJS undoes the escapes a script writes in a string literal's
// URL ("\/", "\x3d", "\u0026").
func unescapeJS(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var d string
	if json.Unmarshal([]byte(`"`+strings.ReplaceAll(s, `\/`, `/`)+`"`), &d) == nil {
		return d
	}
	return strings.ReplaceAll(s, `\/`, `/`)
}

// The words absorbHandoffBody looks for first: a meta refresh, a script's
// navigation, a form, a JSON field named for a token, ticket or JWT.
// A meta refresh's http-equiv and a form's tag name are read by a browser
// in any letter case ("rEfReSh", "<FoRm"), as their patterns are: their
// words are looked for in any case too. A script is case-sensitive.
var (
	refreshWord = foldWordOf("efresh")
	formWord    = foldWordOf("<form")
	// (The script pattern allows any white space between "open" and
	// its "(": "open\t(" and "open  (" are navigations too.)
	navWords    = words("ocation", "OCATION", "open(", "open ", "open\t", "open\n", "open\r", "open\f")
	fieldWords  = words("oken", "OKEN", "icket", "ICKET", "jwt", "JWT", "Jwt")
	fieldGroups = groupWords(fieldWords) // k, K, j, J: four scans for seven words
)

// foldWord is a word in lower case (ASCII) to look for in any letter
// case, and the offset of its rarest byte.
type foldWord struct {
	s string
	a int
}

func foldWordOf(s string) foldWord { return foldWord{s, anchorOf(s)} }

// in reports whether b holds w in any letter case: the rarest byte is
// looked for in both cases with one vectorised scan each (each scan resumed
// only once its last find is passed), and the word compared there.
func (w foldWord) in(b []byte) bool {
	lc := w.s[w.a]
	uc := lc
	if lc >= 'a' && lc <= 'z' {
		uc = lc - 'a' + 'A'
	}
	next := [2]int{-2, -2} // the next lc and uc at or after off (-1: none)
	for off := w.a; off < len(b); {
		best := -1
		for k, c := range [2]byte{lc, uc} {
			if next[k] != -1 && next[k] < off {
				if i := bytes.IndexByte(b[off:], c); i >= 0 {
					next[k] = off + i
				} else {
					next[k] = -1
				}
			}
			if next[k] >= 0 && (best < 0 || next[k] < best) {
				best = next[k]
			}
		}
		if best < 0 {
			return false
		}
		if s := best - w.a; s+len(w.s) <= len(b) && asciiEqualFold(b[s:s+len(w.s)], w.s) {
			return true
		}
		off = best + 1
	}
	return false
}

// asciiEqualFold reports whether b is s (lower-case ASCII) in any letter
// case of its ASCII letters.
func asciiEqualFold(b []byte, s string) bool {
	for i := range len(s) {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// wordGroup is words whose rarest byte is c.
type wordGroup struct {
	c  byte
	ws []word
}

// maxGroupWords bounds the words of a group.
const maxGroupWords = 4

// groupWords groups ws by their rarest byte, in order of first appearance.
func groupWords(ws []word) []wordGroup {
	var gs []wordGroup
	for _, w := range ws {
		c := w.s[w.a]
		k := slices.IndexFunc(gs, func(g wordGroup) bool { return g.c == c })
		if k < 0 {
			gs = append(gs, wordGroup{c: c})
			k = len(gs) - 1
		}
		if len(gs[k].ws) == maxGroupWords {
			panic("proxy: too many words share a byte")
		}
		gs[k].ws = append(gs[k].ws, w)
	}
	return gs
}

func containsAny(b []byte, ws []word) bool {
	for _, w := range ws {
		if w.index(b) >= 0 {
			return true
		}
	}
	return false
}

// word is a word to look for and the offset of its rarest byte.
type word struct {
	s string
	a int
}

func words(ss ...string) []word {
	out := make([]word, len(ss))
	for i, s := range ss {
		out[i] = word{s, anchorOf(s)}
	}
	return out
}

// letterRank orders the letters by how often English text (and JSON's
// field names) holds them, the most frequent first.
const letterRank = "etaoinshrdlcumwfgypbvkjxqz"

// anchorOf is the offset of the byte of w that text holds least often:
// punctuation before upper-case letters, those before lower-case ones, and
// among letters the rarer first; a space is the most frequent of all.
func anchorOf(w string) int {
	best, rank := 0, -2
	for i := 0; i < len(w); i++ {
		c := w[i]
		r := 60
		switch {
		case c == ' ':
			r = -1
		case c >= 'a' && c <= 'z':
			r = strings.IndexByte(letterRank, c)
		case c >= 'A' && c <= 'Z':
			r = 30 + strings.IndexByte(letterRank, c+'a'-'A')
		}
		if r > rank {
			best, rank = i, r
		}
	}
	return best
}

// index is bytes.Index(b, w.s), looking for the word's rarest byte with
// one vectorised scan and comparing the word only where that byte is: the
// words looked for in every answer start with letters most texts hold many
// of, each of which would otherwise start a comparison.
func (w word) index(b []byte) int {
	c := w.s[w.a]
	for off := w.a; off < len(b); {
		i := bytes.IndexByte(b[off:], c)
		if i < 0 {
			return -1
		}
		i += off
		if s := i - w.a; s+len(w.s) <= len(b) && string(b[s:s+len(w.s)]) == w.s {
			return s
		}
		off = i + 1
	}
	return -1
}

// finish reads, decodes and redacts the final response.
func (c *Call) finish(t *target, cur *url.URL, resp *http.Response) (*Response, error) {
	defer resp.Body.Close()
	if t.svc != nil && t.svc.matchesLogin(c.seenURL(t, cur)) {
		return nil, loginRequired(t.svc.Name)
	}
	body, err := readBody(resp, c.p.lim.MaxResponseBytes)
	if err != nil {
		return nil, &RequestError{Service: t.name(), URL: c.p.red.string(cur.String()), Msg: c.p.red.string(err.Error()), cause: causeOf(err)}
	}
	mt, label := mediaType(resp.Header, body, c.p.red)
	out := &t.resp
	*out = Response{Status: resp.StatusCode, MediaType: mt}
	redacted := false
	if textual(mt) {
		text, raw := c.p.red.decodeText(body, mt, label)
		var changed bool
		out.Body, changed = c.p.red.redactInPlace(text)
		if t.svc != nil {
			// The hand-offs are read in the text redacted, each known
			// credential one marker: what the scan takes and refuses
			// (a token field opened by a quote, a navigation, its length)
			// must not depend on a session's bytes that a page shows right
			// after the step's own text. New values are then redacted too.
			st := c.p.red.st.Load()
			if err := c.absorbHandoffBody(t, out.Body); err != nil {
				return nil, err
			}
			if c.p.red.st.Load() != st {
				var more bool
				out.Body, more = c.p.red.redactInPlace(out.Body)
				changed = changed || more
			}
		}
		redacted = raw || changed
	} else {
		out.Binary = true
	}
	if t.svc != nil && len(t.svc.Login.JSON) > 0 && out.Body != nil && jsonExpired(out.Body, t.svc.Login.JSON) {
		return nil, loginRequired(t.svc.Name)
	}
	// The tags of the server's representation (ETag, Content-Range, ...)
	// pass only beside a text body the step sees, nothing redacted from
	// it: a bodiless answer (HEAD, 304) or a binary one shows no body to
	// judge, and its tag may be a hash of a page that holds a session.
	tagged := redacted || out.Binary || len(out.Body) == 0
	h := resp.Header
	// The representation rules (body.go), filtering and redaction in one
	// pass.
	dropContentEncoding(h)
	drop := func(k string) bool {
		// A header whose name holds a credential in any case (a server
		// echoing it as a name) is dropped whole.
		return strippedResponseHeader(k) || c.p.authHeaders[k] || c.p.red.foldedMatch(k)
	}
	for k, vs := range h {
		// (The credential headers first: a service's auth header, which
		// an answer may echo, is dropped without canonicalising its name
		// for the representation table.)
		if drop(k) || representationDrop(k, tagged) {
			delete(h, k)
			continue
		}
		if len(vs) > 1 {
			// A step reads a header's lines joined (the request step's
			// headers, the trace): a session a server wrote a piece a line
			// (a list header, one element each) is whole there.
			h[k] = []string{c.p.red.string(strings.Join(vs, ", "))}
			continue
		}
		for i, v := range vs {
			vs[i] = c.p.red.string(v)
		}
	}
	if !out.Binary && !drop("Content-Length") {
		// The value and its slice live in the target, as the response
		// does (the target is never reused).
		n := strconv.AppendInt(t.clenBuf[:0], int64(len(out.Body)), 10)
		t.clen[0] = c.p.red.string(unsafe.String(unsafe.SliceData(n), len(n)))
		h["Content-Length"] = t.clen[:1:1]
	}
	out.Header = h
	switch {
	case cur == &t.u && t.plain && c.p.red.st.Load() == t.checked:
		// What carriesSecret searched, and public parts (target.plain).
		if out.URL = t.urlStr; out.URL == "" {
			out.URL = cur.String()
		}
	case cur == &t.u && t.urlStr != "":
		out.URL = c.p.red.string(t.urlStr)
	default:
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
