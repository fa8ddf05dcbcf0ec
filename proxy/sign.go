package proxy

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
)

const userAgent = "pku-harness/1"

var userAgentValue = []string{userAgent}

var acceptEncoding = []string{"gzip, deflate"}

// headerField is a header name (canonical) and its values, ready to put
// into a request's header map. The values are shared by every request
// that carries them and never modified (a RoundTripper only reads them).
type headerField struct {
	name  string
	value []string
}

// session is what signing needs of one stored session of a service,
// computed once per session value: a Keystore never changes a value it
// has returned, it stores a new one.
type session struct {
	ss      *ServiceSecrets
	cookies []string      // the "name=value" pairs the service attaches, sorted
	cookie  []string      // the Cookie header value they make, nil when none
	headers []headerField // the service's auth headers the session holds
	csrf    []string      // the CSRF header's value from a stored cookie (decoded), nil when none
}

// signed reports whether ss is the session s signed with last: its
// values are registered with the redactor already (session did it, and
// the redactor forgets nothing), for every call from then on.
func (s *service) signed(ss *ServiceSecrets) bool {
	if s == nil {
		return false
	}
	se := s.sess.Load()
	return se != nil && se.ss == ss
}

// session returns the signing material of ss, computing it (and
// registering its values with the redactor) the first time ss is seen.
func (s *service) session(p *Proxy, ss *ServiceSecrets) *session {
	if se := s.sess.Load(); se != nil && se.ss == ss {
		return se
	}
	// A session not seen before: redact its values from now on.
	p.addSecrets(ss)
	se := &session{ss: ss}
	if s.allCookies {
		for n, v := range ss.Cookies {
			se.cookies = append(se.cookies, n+"="+v)
		}
	} else {
		for _, n := range s.Auth.Cookies {
			if v, ok := ss.Cookies[n]; ok {
				se.cookies = append(se.cookies, n+"="+v)
			}
		}
	}
	if len(se.cookies) > 0 {
		sort.Strings(se.cookies)
		se.cookie = []string{strings.Join(se.cookies, "; ")}
	}
	for _, n := range s.headers {
		if v, ok := ss.Headers[n]; ok {
			se.headers = append(se.headers, headerField{n, []string{v}})
		}
	}
	if s.CSRF.Cookie != "" {
		if v, ok := ss.Cookies[s.CSRF.Cookie]; ok {
			if d, err := url.PathUnescape(v); err == nil && d != v {
				p.red.add(d) // the decoded form is a credential too
				v = d
			}
			se.csrf = []string{v}
		}
	}
	s.sess.Store(se)
	return se
}

// sign builds a hop's headers: the step's, then for a campus request the
// service's fixed headers, its session (only its own) and its CSRF header;
// the call's jar cookies for exactly this origin.
func (c *Call) sign(t *target, cur *url.URL, hasBody bool) http.Header {
	var jar map[string]string
	c.jarMu.Lock()
	if len(c.jar) > 0 {
		jar = c.jar[originOf(cur)]
	}
	c.jarMu.Unlock()
	s := t.svc
	var se *session
	n := len(t.header) + 3 // Content-Type, Accept-Encoding, User-Agent
	if s != nil {
		if ss, _ := c.p.keys.Get(s.Name); ss != nil {
			se = s.session(c.p, ss)
			n += len(se.headers)
		}
		n += len(s.fixed) + 2 // Cookie, the CSRF header
	}
	h := make(http.Header, n)
	for k, v := range t.header {
		h[k] = v
	}
	if hasBody && t.ctype != "" {
		h["Content-Type"] = []string{t.ctype}
	}
	var cookie []string
	if s != nil {
		for _, f := range s.fixed {
			h[f.name] = f.value
		}
		if se != nil {
			for _, f := range se.headers {
				h[f.name] = f.value
			}
			cookie = se.cookie
		}
		if s.CSRF.Cookie != "" {
			if se != nil && se.csrf != nil {
				h[s.csrfHeader] = se.csrf
			} else if jar != nil {
				c.jarMu.Lock()
				v, ok := jar[s.CSRF.Cookie]
				c.jarMu.Unlock()
				if ok {
					if d, err := url.PathUnescape(v); err == nil {
						v = d
					}
					h[s.csrfHeader] = []string{v}
				}
			}
		}
	}
	if jar != nil {
		var cookies []string
		if se != nil {
			cookies = append(cookies, se.cookies...)
		}
		c.jarMu.Lock()
		for n, v := range jar {
			if se != nil && s.isSessionCookie(se.ss, n) {
				if _, held := se.ss.Cookies[n]; held {
					continue // the stored session's value wins
				}
			}
			cookies = append(cookies, n+"="+v)
		}
		c.jarMu.Unlock()
		if len(cookies) > 0 {
			sort.Strings(cookies)
			cookie = []string{strings.Join(cookies, "; ")}
		}
	}
	if cookie != nil {
		h["Cookie"] = cookie
	}
	h["Accept-Encoding"] = acceptEncoding
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = userAgentValue
	}
	return h
}
