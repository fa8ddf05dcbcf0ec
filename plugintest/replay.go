package plugintest

import (
	"cmp"
	"crypto/tls"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
)

// replay serves one case's recorded exchanges: one loopback server per
// campus service and per web origin the document declares, each answering
// only its own exchanges. It collects every problem it sees (an unmatched
// request, a missing session, a body that differs) for the case's report.
type replay struct {
	c       *Case
	servers []*httptest.Server
	fixed   map[string]map[string]string // service -> fixed query parameters the proxy adds
	attach  map[string]attached          // service -> the session values the proxy attaches

	mu       sync.Mutex
	used     []int
	problems []string
}

// target is what one replay server stands for: a campus service or a web
// origin.
type target struct {
	service string
	origin  string // manifest.Origin.String()
}

func (t target) String() string {
	if t.origin != "" {
		return "web origin " + t.origin
	}
	return "service " + t.service
}

// attached is what the proxy sends of a service's secrets.
type attached struct {
	cookies map[string]string
	headers map[string]string
	given   bool // the case gives secrets for the service
}

// newReplay starts the servers and returns the catalogue that points each
// declared service at its server and the --resolve map that sends each
// declared web origin to its own (TLS with tlsCfg for https origins).
func newReplay(c *Case, services []string, origins []manifest.Origin, base proxy.Catalogue, tlsCfg *tls.Config) (*replay, proxy.Catalogue, map[string]string) {
	r := &replay{c: c, fixed: map[string]map[string]string{},
		attach: map[string]attached{}, used: make([]int, len(c.Exchanges))}
	cat := proxy.Catalogue{}
	for _, name := range services {
		entry := &proxy.Service{Name: name}
		if b := base[name]; b != nil {
			cp := *b
			entry = &cp
		}
		srv := httptest.NewServer(r.handler(target{service: name}))
		entry.Origin = srv.URL
		r.servers = append(r.servers, srv)
		r.fixed[name] = entry.Query
		r.attach[name] = attachedOf(entry, c.Secrets[name])
		cat[name] = entry
	}
	resolve := map[string]string{}
	for _, o := range origins {
		srv := httptest.NewUnstartedServer(r.handler(target{origin: o.String()}))
		if o.Scheme == "https" {
			srv.TLS = tlsCfg
			srv.StartTLS()
		} else {
			srv.Start()
		}
		r.servers = append(r.servers, srv)
		resolve[net.JoinHostPort(o.Host, strconv.Itoa(o.Port))] = srv.Listener.Addr().String()
	}
	return r, cat, resolve
}

func attachedOf(s *proxy.Service, ss *proxy.ServiceSecrets) attached {
	a := attached{cookies: map[string]string{}, headers: map[string]string{}, given: ss != nil}
	if ss == nil {
		return a
	}
	for _, n := range s.Auth.Cookies {
		if n == "*" {
			maps.Copy(a.cookies, ss.Cookies)
			continue
		}
		if v, ok := ss.Cookies[n]; ok {
			a.cookies[n] = v
		}
	}
	for _, n := range s.Auth.Headers {
		if v, ok := ss.Headers[http.CanonicalHeaderKey(n)]; ok {
			a.headers[http.CanonicalHeaderKey(n)] = v
		}
	}
	return a
}

func (r *replay) close() {
	for _, s := range r.servers {
		s.Close()
	}
}

func (r *replay) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.problems) < 20 {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	}
}

func (r *replay) handler(t target) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, MaxBodyBytes+1))
		if err != nil || len(body) > MaxBodyBytes {
			r.problem("%s %s: the request body could not be read or is over %d bytes", req.Method, req.URL.Path, MaxBodyBytes)
			http.Error(w, "plugintest: bad request body", http.StatusBadRequest)
			return
		}
		query := req.URL.Query()
		i := r.match(t, req.Method, req.URL.Path, query)
		if i < 0 {
			r.problem("no recorded exchange answers %s", r.describe(t, req.Method, req.URL.Path, query))
			http.Error(w, "plugintest: no recorded exchange answers this request", http.StatusNotFound)
			return
		}
		e := r.c.Exchanges[i]
		if t.service != "" {
			r.checkSession(e, t.service, req)
		}
		r.checkBody(e, req, body)
		for k, vs := range e.Resp.Header {
			w.Header()[k] = append([]string(nil), vs...)
		}
		w.WriteHeader(e.Resp.Status)
		if req.Method != http.MethodHead {
			w.Write(e.Resp.Body)
		}
	})
}

// match returns the first unused exchange (or a used one marked repeat)
// with this service or origin, method, path and query.
func (r *replay) match(t target, method, path string, q url.Values) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	found := -1
	for i, e := range r.c.Exchanges {
		if e.Service != t.service || e.Origin != t.origin || e.Method != method || e.Path != path || !sameQuery(e.Query, q, r.fixed[t.service]) {
			continue
		}
		if r.used[i] == 0 {
			r.used[i]++
			return i
		}
		if e.Repeat && found < 0 {
			found = i
		}
	}
	if found >= 0 {
		r.used[found]++
	}
	return found
}

// sameQuery compares the recorded query with the request's, ignoring the
// service's fixed parameters unless the recording lists them. A repeated
// parameter's values compare in order (a: [1, 2] is a=1&a=2, not a=2&a=1).
func sameQuery(want, got url.Values, fixed map[string]string) bool {
	g := url.Values{}
	for k, v := range got {
		if _, isFixed := fixed[k]; isFixed {
			if _, listed := want[k]; !listed {
				continue
			}
		}
		g[k] = v
	}
	return maps.EqualFunc(want, g, slices.Equal)
}

// describe renders a request for a message: the method, the path (the
// whole URL for a web origin) and the query without the service's fixed
// parameters, and the recorded exchanges of the service or origin.
func (r *replay) describe(t target, method, path string, q url.Values) string {
	shown := url.Values{}
	for k, v := range q {
		if _, isFixed := r.fixed[t.service][k]; !isFixed {
			shown[k] = v
		}
	}
	s := method + " " + t.origin + path
	if len(shown) > 0 {
		s += "?" + shown.Encode()
	}
	s += " (" + t.String() + ")"
	var rec []string
	for _, e := range r.c.Exchanges {
		if e.Service == t.service && e.Origin == t.origin {
			x := e.Method + " " + e.Path
			if len(e.Query) > 0 {
				x += "?" + e.Query.Encode()
			}
			rec = append(rec, x+" at "+e.Pos.String())
		}
	}
	name := cmp.Or(t.origin, t.service)
	if len(rec) == 0 {
		return s + "; the case records no exchange for " + name
	}
	return s + "; recorded for " + name + ": " + strings.Join(rec, ", ")
}

// checkSession checks that the request carried the session the case gave
// (or none when the exchange says session: false). Messages name cookies
// and headers, never their values.
func (r *replay) checkSession(e *Exchange, service string, req *http.Request) {
	a := r.attach[service]
	want := a.given
	if e.Session != nil {
		want = *e.Session
	}
	at := e.Pos.String()
	if want {
		if len(a.cookies)+len(a.headers) == 0 {
			if a.given {
				r.problem("exchange at %s expects a session, but the catalogue entry of %s attaches none of the cookies and headers the case gives", at, service)
			} else {
				r.problem("exchange at %s expects a session, but the case gives no secrets for %s", at, service)
			}
			return
		}
		for name, v := range a.cookies {
			ck, err := req.Cookie(name)
			if err != nil || ck.Value != v {
				r.problem("the request answered by the exchange at %s did not carry the session cookie %s of %s", at, name, service)
			}
		}
		for name, v := range a.headers {
			if req.Header.Get(name) != v {
				r.problem("the request answered by the exchange at %s did not carry the session header %s of %s", at, name, service)
			}
		}
		return
	}
	for svc, ss := range r.c.Secrets {
		if ss == nil {
			continue
		}
		for _, vals := range []map[string]string{ss.Cookies, ss.Headers} {
			for name, v := range vals {
				for _, hv := range req.Header {
					for _, x := range hv {
						if strings.Contains(x, v) {
							r.problem("the request answered by the exchange at %s carried the session value %s of %s, but the exchange says session: false", at, name, svc)
						}
					}
				}
			}
		}
	}
}

// checkBody compares the request's body with the recorded form or JSON.
func (r *replay) checkBody(e *Exchange, req *http.Request, body []byte) {
	at := e.Pos.String()
	if e.Form != nil {
		got, err := url.ParseQuery(string(body))
		if err != nil || !strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			r.problem("the request answered by the exchange at %s has no form body (content type %q)", at, req.Header.Get("Content-Type"))
		} else if !sameQuery(e.Form, got, nil) {
			r.problem("the form of the request answered by the exchange at %s differs:\n%s", at, indent(diffLines(formText(e.Form), formText(got)), "  "))
		}
	}
	if e.HasJSON {
		got, err := decodeJSON(body)
		if err != nil {
			r.problem("the request answered by the exchange at %s has no JSON body: %v", at, err)
			return
		}
		if !equal(e.JSON, got) {
			r.problem("the JSON body of the request answered by the exchange at %s differs:\n%s", at, indent(diffLines(pretty(e.JSON), pretty(got)), "  "))
		}
	}
}

func formText(v url.Values) string {
	var lines []string
	for _, k := range sortedKeys(v) {
		for _, x := range v[k] {
			lines = append(lines, k+"="+x)
		}
	}
	return strings.Join(lines, "\n")
}

// unused lists exchanges no request reached.
func (r *replay) unused() []*Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Exchange
	for i, n := range r.used {
		if n == 0 {
			out = append(out, r.c.Exchanges[i])
		}
	}
	return out
}

func (r *replay) takeProblems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.problems...)
}
