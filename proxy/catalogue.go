package proxy

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/pkuinfo/harness/internal/atomicfile"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/netguard"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
)

// Catalogue maps a campus service's name to its entry.
type Catalogue map[string]*Service

// Service is one campus service: where it lives, how its session is attached,
// and how it says the session has expired.
type Service struct {
	Name   string
	Origin string // scheme://host[:port]; https unless the host is loopback
	Auth   Auth
	Login  Login
	CSRF   CSRF
	// Headers are fixed headers the service always needs (the card service's
	// synaccesssource: h5). They win over a step's header of the same name.
	Headers map[string]string
	// Query holds fixed query parameters added when a request lacks them.
	Query map[string]string
	// Concurrency caps the requests in flight to this service across all
	// calls (0: Limits.ServiceConcurrency).
	Concurrency int
	// Entry lists the service's login and hand-off entry points: path
	// prefixes on its origin where a session is made or handed on (a
	// single sign-on landing, a ticket or token exchange). A step never
	// requests them, the proxy never follows a step's redirect into one,
	// and nothing an entry point answers is stored in the keystore. The
	// service's login redirect paths count as entry points too. Compared
	// without letter case and without a segment's ";parameters".
	Entry []string
	// QueryPaths are the service's query endpoints: paths that answer a
	// query sent by POST and change nothing (an exact path, or a folder
	// ending in "/"). A tool's unsafe request elsewhere counts as a write
	// (see IsQueryPath).
	QueryPaths []string
	// Networks are address blocks of the campus network the service's
	// hosts live in ("115.27.0.0/16"), beyond the built-in 162.105.0.0/16:
	// the campus networks of a proxy are the built-in block and every
	// entry's networks, and no web request may reach an address in them
	// (a device there is trusted by campus services for its address).
	Networks []string
}

// Auth names the session parts the proxy attaches from the keystore. A
// cookie name "*" attaches every stored cookie of the service and treats
// every cookie the service sets as part of the session.
type Auth struct {
	Cookies []string
	Headers []string
}

// Login says how the service signals a missing or expired session.
type Login struct {
	// Redirect is a path prefix ("/iaaa/login", on any host) or an absolute
	// URL prefix ("https://iaaa.pku.edu.cn/iaaa/"): a redirect there, or a
	// final URL there, means the session has expired.
	Redirect string
	// Redirects are more such prefixes.
	Redirects []string
	// Status lists HTTP statuses that mean expired (the card service: 401).
	Status []int
	// JSON maps a top-level field of a JSON body to the values that mean
	// expired, compared as text ({"code": ["401"]}).
	JSON map[string][]string
}

// CSRF is a rule the proxy applies itself: the value of cookie Cookie (from
// the session or the call's jar) is copied into header Header.
type CSRF struct {
	Cookie string
	Header string
}

// prefixes returns every login prefix.
func (l *Login) prefixes() []string {
	var out []string
	if l.Redirect != "" {
		out = append(out, l.Redirect)
	}
	return append(out, l.Redirects...)
}

const iaaaPrefix = "https://iaaa.pku.edu.cn/iaaa/"

// Builtin returns the real campus services, as far as public clients show
// them (../shared/campus). Every entry is a fresh copy.
func Builtin() Catalogue {
	iaaaLogin := Login{Redirect: iaaaPrefix}
	list := []*Service{
		// The unified login itself: every path of it makes or hands on a
		// session (oauth.jsp, oauthlogin.do, oauthlogin4QRCode.do,
		// getPublicKey.do, genQRCode.do, isMobileAuthen.do).
		{Name: "iaaa", Origin: "https://iaaa.pku.edu.cn", Entry: []string{"/"}},
		{Name: "portal", Origin: "https://portal.pku.edu.cn",
			Auth:  Auth{Cookies: []string{"SESSION", "JSESSIONID"}},
			Login: Login{Redirect: iaaaPrefix, Redirects: []string{"/portal2017/login.jsp"}, Status: []int{401}},
			Entry: []string{"/portal2017/ssoLogin.do", "/publicQuery/ssoLogin.do", "/portal2017/util/redirectToCard.do",
				"/portal2017/util/portletRedir.do", "/portal2017/util/appSysRedir.do"}},
		{Name: "card", Origin: "https://bdcard.pku.edu.cn",
			Auth:  Auth{Headers: []string{"synjones-auth"}},
			Login: Login{Redirect: iaaaPrefix, Status: []int{401}, JSON: map[string][]string{"code": {"401"}}},
			Headers: map[string]string{
				"synaccesssource":  "h5",
				"x-requested-with": "cn.edu.pku.PKUAndroid",
				"User-Agent":       "PKUANDROID2.2.0 okhttp/4.12.0",
			},
			Query:       map[string]string{"synAccessSource": "h5"},
			Concurrency: 2,
			Entry:       []string{"/berserker-auth/"}},
		{Name: "card-legacy", Origin: "https://card.pku.edu.cn",
			Auth: Auth{Cookies: []string{"hallticket"}}, Login: iaaaLogin, Entry: []string{"/cassyno/index"}},
		{Name: "treehole", Origin: "https://treehole.pku.edu.cn",
			Auth:  Auth{Cookies: []string{"pku_token", "_session", "XSRF-TOKEN"}, Headers: []string{"Authorization", "uuid"}},
			Login: Login{Redirect: iaaaPrefix, Status: []int{401}},
			CSRF:  CSRF{Cookie: "XSRF-TOKEN", Header: "X-XSRF-TOKEN"},
			Entry: []string{"/chapi/cas_iaaa_login", "/ch/web/iaaa_success"}},
		{Name: "wproc", Origin: "https://wproc.pku.edu.cn",
			Auth:  Auth{Cookies: []string{"*"}},
			Login: Login{Redirect: "/site/login/cas-login", Redirects: []string{iaaaPrefix}},
			Entry: []string{"/site/login/"}},
		{Name: "xiaobei", Origin: "https://xiaobei.pku.edu.cn",
			Auth:  Auth{Cookies: []string{"session"}},
			Login: Login{Redirect: iaaaPrefix, Status: []int{401}},
			Entry: []string{"/api/api_validate"}},
		{Name: "course", Origin: "https://course.pku.edu.cn",
			Auth:  Auth{Cookies: []string{"*"}},
			Login: Login{Redirect: iaaaPrefix, Redirects: []string{"/webapps/login"}},
			Entry: []string{"/webapps/bb-sso-BBLEARN/"}},
		{Name: "elective", Origin: "https://elective.pku.edu.cn",
			Auth: Auth{Cookies: []string{"JSESSIONID"}}, Login: iaaaLogin, Concurrency: 1,
			Entry: []string{"/elective2008/ssoLogin.do"}},
		{Name: "dean", Origin: "https://dean.pku.edu.cn"},
		{Name: "eecs", Origin: "https://eecs.pku.edu.cn"},
		{Name: "simso", Origin: "https://simso.pku.edu.cn"},
		{Name: "library", Origin: "https://www.lib.pku.edu.cn"},
		{Name: "bdkj", Origin: "https://bdkj.pku.edu.cn",
			Auth: Auth{Cookies: []string{"JWTUser", "SESSION"}}, Login: iaaaLogin, Entry: []string{"/login/oauth"}},
		{Name: "its", Origin: "https://its.pku.edu.cn",
			Auth: Auth{Cookies: []string{"*"}}, Login: Login{Redirect: "/cas/login"}, Entry: []string{"/cas/"}},
		{Name: "cwfw", Origin: "https://cwfw.pku.edu.cn",
			Auth: Auth{Cookies: []string{"*"}}, Login: iaaaLogin, Entry: []string{"/WFManager/home2.jsp"}},
	}
	c := make(Catalogue, len(list))
	for _, s := range list {
		s.QueryPaths = slices.Clone(builtinQueryPaths[s.Name])
		c[s.Name] = s
	}
	return c
}

// Merge returns a new catalogue: c's entries, with each entry of over
// replacing the one of the same name. Its origin, auth and login are
// over's; what keeps a step away from the service's sessions and what the
// service needs of every request stay c's where over says nothing: its
// entry points and login pages (over's are added), fixed headers and
// query, CSRF rule,
// query endpoints, concurrency and networks. A services file that points
// card at a test server keeps card's login entry points and the headers
// the real service wants.
func (c Catalogue) Merge(over Catalogue) Catalogue {
	out := make(Catalogue, len(c)+len(over))
	maps.Copy(out, c)
	for name, s := range over {
		if b := c[name]; b != nil && s != nil {
			s = s.under(b)
		}
		out[name] = s
	}
	return out
}

// under is a copy of s with what it leaves unset taken from b (Merge).
func (s *Service) under(b *Service) *Service {
	m := *s
	m.Entry = slices.Clone(b.Entry)
	for _, l := range b.Login.prefixes() {
		if strings.HasPrefix(l, "/") { // a login page of the service's own
			m.Entry = append(m.Entry, l)
		}
	}
	m.Entry = append(m.Entry, s.Entry...)
	if m.Headers == nil {
		m.Headers = maps.Clone(b.Headers)
	}
	if m.Query == nil {
		m.Query = maps.Clone(b.Query)
	}
	if m.CSRF == (CSRF{}) {
		m.CSRF = b.CSRF
	}
	if m.QueryPaths == nil {
		m.QueryPaths = slices.Clone(b.QueryPaths)
	}
	if m.Concurrency == 0 {
		m.Concurrency = b.Concurrency
	}
	if m.Networks == nil {
		m.Networks = slices.Clone(b.Networks)
	}
	return &m
}

// Names lists the catalogue's service names, sorted.
func (c Catalogue) Names() []string { return slices.Sorted(maps.Keys(c)) }

// Validate checks every entry, as LoadServices does.
func (c Catalogue) Validate() error {
	var errs []error
	for _, name := range c.Names() {
		if _, err := compileService(name, c[name]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// maxConfigBytes bounds a services or secrets file.
const maxConfigBytes = 1 << 20

// serviceDecl declares one entry of a services file, and authDecl,
// loginDecl and csrfDecl its parts: the decoder, the JSON Schema
// (docs/schema/services.schema.json) and the reference read them.
var serviceDecl = &yamlx.Decl{Name: "a service", Def: "service", Doc: "One campus service: where it lives, how its session is attached, how it says the session has expired.", Fields: []yamlx.Field{
	{Name: "origin", Type: yamlx.String{MinLen: 1}, Required: true, Doc: "scheme://host[:port]: https, or http for a loopback address."},
	{Name: "auth", Type: yamlx.Object{Decl: authDecl}, Doc: "The session parts the proxy attaches from the keystore."},
	{Name: "login", Type: yamlx.Object{Decl: loginDecl}, Doc: "How the service signals a missing or expired session."},
	{Name: "csrf", Type: yamlx.Object{Decl: csrfDecl}, Doc: "A cookie whose value the proxy copies into a header."},
	{Name: "headers", Type: yamlx.MapOf{Of: yamlx.String{}}, Doc: "Fixed headers the service always needs; they win over a step's header of the same name."},
	{Name: "query", Type: yamlx.MapOf{Of: yamlx.String{}}, Doc: "Fixed query parameters, added when a request lacks them."},
	{Name: "concurrency", Type: yamlx.Int{Min: 0, Max: maxConcurrency}, Default: int64(0), Doc: "Requests in flight to the service across calls (0: the proxy's default)."},
	{Name: "entry", Type: yamlx.List{Of: yamlx.String{}, Max: maxEntries}, Doc: "Login and hand-off entry points: path prefixes a step never requests and whose answers are never stored."},
	{Name: "networks", Type: yamlx.List{Of: yamlx.String{}, Max: maxNetworks}, Doc: "Campus address blocks the service's hosts live in, beyond 162.105.0.0/16 (\"115.27.0.0/16\")."},
}}

var authDecl = &yamlx.Decl{Name: "auth", Fields: []yamlx.Field{
	{Name: "cookies", Type: yamlx.List{Of: yamlx.String{}}, Doc: "Session cookie names; \"*\" attaches every stored cookie."},
	{Name: "headers", Type: yamlx.List{Of: yamlx.String{}}, Doc: "Session header names (Authorization, synjones-auth, …)."},
}}

var loginDecl = &yamlx.Decl{Name: "login", Fields: []yamlx.Field{
	{Name: "redirect", Type: yamlx.String{}, Doc: "A path prefix (on any host) or absolute URL prefix: a redirect there means the session has expired."},
	{Name: "redirects", Type: yamlx.List{Of: yamlx.String{}}, Doc: "More such prefixes."},
	{Name: "status", Type: yamlx.List{Of: httpStatus}, Doc: "HTTP statuses that mean expired."},
	{Name: "json", Type: yamlx.MapOf{Of: yamlx.List{Of: yamlx.Scalar{}}}, Doc: "A top-level field of a JSON body and the values that mean expired, compared as text."},
}}

var csrfDecl = &yamlx.Decl{Name: "csrf", Fields: []yamlx.Field{
	{Name: "cookie", Type: yamlx.String{}, Doc: "The cookie holding the token (with header)."},
	{Name: "header", Type: yamlx.String{}, Doc: "The header the proxy copies it into (with cookie)."},
}}

// Bounds of a catalogue entry: its declaration checks them in a services
// file, compileService in every entry.
const (
	maxConcurrency = 64
	maxEntries     = 256 // entry points (compileService counts the login paths too)
	maxNetworks    = 64
)

// httpStatus is a login status, an HTTP status code.
var httpStatus = yamlx.Int{Min: 100, Max: 599, Hint: "an HTTP status"}

// LoadServices reads a services file (CONTRACT.md): a YAML mapping from
// service name to an entry as serviceDecl declares it. Unknown keys,
// anchors, aliases and tags are refused; every problem is reported as
// FILE:LINE:COL: message.
func LoadServices(path string) (Catalogue, error) {
	return loadConfig(path, 8, func(c *yamlx.Ctx) Catalogue {
		top, ok := c.Doc.Mapping(c.Doc.Root, "the services file", nil, c.L)
		if !ok {
			return nil
		}
		out := make(Catalogue, len(top.Fields))
		for _, f := range top.Fields {
			if !manifest.ServiceName.Check(c, f.KeyN, "service name", f.Key) {
				continue
			}
			if isRemoteName(f.Key) {
				c.Errorf(f.KeyN, "service name %q: %s", f.Key, remoteNameRule)
				continue
			}
			decl := *serviceDecl
			decl.Name = "service " + strconv.Quote(f.Key)
			o, ok := c.Object(f.Value, &decl)
			if !ok {
				continue
			}
			auth, login, csrf := o.Obj("auth"), o.Obj("login"), o.Obj("csrf")
			s := &Service{Name: f.Key, Origin: o.String("origin"),
				Auth:    Auth{Cookies: auth.Strings("cookies"), Headers: auth.Strings("headers")},
				Login:   Login{Redirect: login.String("redirect"), Redirects: login.Strings("redirects")},
				CSRF:    CSRF{Cookie: csrf.String("cookie"), Header: csrf.String("header")},
				Headers: o.StringMap("headers"), Query: o.StringMap("query"), Concurrency: int(o.Int("concurrency")),
				Entry: o.Strings("entry"), Networks: o.Strings("networks")}
			for _, v := range asList(login.Value("status")) {
				s.Login.Status = append(s.Login.Status, int(v.(int64)))
			}
			if js, _ := login.Value("json").([]yamlx.Entry); js != nil {
				s.Login.JSON = map[string][]string{}
				for _, e := range js {
					for _, v := range e.Value.([]any) {
						s.Login.JSON[e.Key] = append(s.Login.JSON[e.Key], v.(string))
					}
				}
			}
			if _, err := compileService(f.Key, s); err != nil {
				c.Errorf(f.Value, "%s", err.Error())
			}
			out[f.Key] = s
		}
		return out
	})
}

// ServicesSchema is the JSON Schema of a services file, generated from the
// declarations (docs/schema/services.schema.json).
func ServicesSchema() map[string]any {
	g := yamlx.NewGen()
	root := map[string]any{"type": "object", "propertyNames": map[string]any{"pattern": manifest.ServiceName.Pattern.String()},
		"additionalProperties": g.Object(serviceDecl)}
	return yamlx.SchemaFile("https://pkuinfo.github.io/harness/schema/services.schema.json", "A services file (--services)",
		"Campus services by name, each replacing the built-in entry of that name: its origin, auth and login are the file's; its entry points and own login pages, fixed headers and query, CSRF rule, query endpoints, concurrency and networks stay the built-in's where the file gives none. Reference: docs/proxy.md.", root, g)
}

// loadConfig reads and parses a services or secrets file (a mapping at most
// depth deep) and decodes it with decode, which reports to c: an empty file
// is an empty map, a file with any error the sorted list of its problems.
func loadConfig[M ~map[string]V, V any](path string, depth int, decode func(c *yamlx.Ctx) M) (M, error) {
	src, err := readConfig(path)
	if err != nil {
		return nil, err
	}
	var l diag.List
	doc := yamlx.Parse(path, src, 1, nil, yamlx.Limits{MaxBytes: maxConfigBytes, MaxKeys: 20000, MaxDepth: depth}, &l)
	out := M{}
	if doc.Safe() {
		out = decode(yamlx.NewCtx(doc, &l, nil))
	}
	if l.HasErrors() {
		l.Sort()
		return nil, &l
	}
	return out, nil
}

func asList(v any) []any { list, _ := v.([]any); return list }

func readConfig(path string) ([]byte, error) {
	// Opened without waiting and checked as opened: a named pipe would
	// wait for a writer, for ever, and a device never ends.
	f, err := atomicfile.OpenRegular(path)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", path, unwrapPathError(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, unwrapPathError(err))
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s is more than the limit of %d bytes", path, maxConfigBytes)
	}
	return data, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isRemoteName reports whether a service name is a remote plugin's id: the
// keystore keeps remote plugins' bearer tokens under their ids, so a campus
// service of that name would have the token attached to its requests.
func isRemoteName(s string) bool { return strings.HasPrefix(s, manifest.RemotePrefix) }

const remoteNameRule = "names starting with " + manifest.RemotePrefix + " are remote plugins' ids (the keystore keeps their tokens under them), never a campus service's"

// validName reports whether s is a service name (manifest.ServiceName).
func validName(s string) bool { return manifest.ServiceName.Pattern.MatchString(s) }

// origin is a parsed scheme://host:port.
type origin struct {
	scheme string
	host   string // lower case; IPv6 without brackets
	port   int
	str    string // scheme://host[:port], default port omitted
}

func (o origin) hostport() string {
	return netguard.JoinHostPort(o.host, o.port)
}

func makeOrigin(scheme, host string, port int) origin {
	o := origin{scheme: scheme, host: host, port: port}
	o.str = scheme + "://" + urlHost(o)
	return o
}

// parseOrigin reads scheme://host[:port] with nothing else (a lone "/" path
// is tolerated).
func parseOrigin(s string) (origin, error) {
	u, err := url.Parse(s)
	if err != nil {
		return origin{}, fmt.Errorf("origin %q is not a URL", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return origin{}, fmt.Errorf("origin %q must start with https:// or http://", s)
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || (u.Path != "" && u.Path != "/") || u.Opaque != "" {
		return origin{}, fmt.Errorf("origin %q must be scheme://host[:port] only", s)
	}
	host, err := netguard.CanonicalHost(u.Hostname())
	if err != nil {
		return origin{}, fmt.Errorf("origin %q: %v", s, err)
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 || p[0] == '0' {
			return origin{}, fmt.Errorf("origin %q has a bad port", s)
		}
		port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return origin{}, fmt.Errorf("origin %q has an empty port", s)
	}
	return makeOrigin(u.Scheme, host, port), nil
}

// service is a compiled catalogue entry.
type service struct {
	*Service
	origin      origin
	cookies     map[string]bool // declared auth cookie names
	allCookies  bool            // "*"
	headers     []string        // canonical auth header names
	fixed       []headerField   // canonical fixed headers, sorted by name
	loginStatus map[int]bool
	fixedQuery  string                  // Query, encoded
	loginPaths  []string                // login prefixes that are paths (any host)
	loginURLs   []loginURL              // login prefixes that are absolute URLs
	urlHost     string                  // host[:port] as a URL holds it
	entry       []string                // entry point prefixes, in entryForm
	csrfHeader  string                  // CSRF.Header, canonical
	sem         chan struct{}           // requests in flight, across calls (set by New)
	sess        atomic.Pointer[session] // the signing material of the session last seen
}

type loginURL struct{ origin, path string }

// isSessionCookie reports whether a cookie is part of the stored session
// ss: a declared auth cookie, or for a service that attaches every stored
// cookie ("*"), one the session already holds. A new cookie such a service
// sets (a language or theme a page copies from its query) is no session: it
// stays in the call's jar, so a plugin cannot have an arbitrary value
// stored in the keystore, and redacted everywhere from then on.
func (s *service) isSessionCookie(ss *ServiceSecrets, name string) bool {
	if s.cookies[name] {
		return true
	}
	if !s.allCookies || ss == nil {
		return false
	}
	_, ok := ss.Cookies[name]
	return ok
}

// compileService validates an entry and precomputes what requests need.
func compileService(name string, s *Service) (*service, error) {
	if s == nil {
		return nil, fmt.Errorf("service %q: empty entry", name)
	}
	if !validName(name) {
		return nil, fmt.Errorf("service name %q %s", name, manifest.ServiceName.Rule)
	}
	if isRemoteName(name) {
		return nil, fmt.Errorf("service name %q: %s", name, remoteNameRule)
	}
	o, err := parseOrigin(s.Origin)
	if err != nil {
		return nil, fmt.Errorf("service %q: %v", name, err)
	}
	if o.scheme != "https" && !netguard.IsLoopbackHost(o.host) {
		return nil, fmt.Errorf("service %q: origin %q must use https (plain http only for loopback addresses)", name, s.Origin)
	}
	cs := &service{Service: s, origin: o, cookies: map[string]bool{}, loginStatus: map[int]bool{},
		urlHost: urlHost(o)}
	for _, c := range s.Auth.Cookies {
		if c == "*" {
			cs.allCookies = true
			continue
		}
		if !validToken(c) {
			return nil, fmt.Errorf("service %q: auth cookie name %q is not a valid cookie name", name, c)
		}
		cs.cookies[c] = true
	}
	for _, h := range s.Auth.Headers {
		if !validToken(h) {
			return nil, fmt.Errorf("service %q: auth header name %q is not a valid header name", name, h)
		}
		ch := http.CanonicalHeaderKey(h)
		if reservedHeader(ch) && ch != "Authorization" {
			return nil, fmt.Errorf("service %q: %s cannot be an auth header", name, h)
		}
		cs.headers = append(cs.headers, ch)
	}
	for _, p := range s.Login.prefixes() {
		if strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") {
			cs.loginPaths = append(cs.loginPaths, p)
			continue
		}
		u, err := url.Parse(p)
		if err != nil || !(strings.HasPrefix(p, "https://") || strings.HasPrefix(p, "http://")) || u.Host == "" {
			return nil, fmt.Errorf("service %q: login redirect %q must be a path starting with / or an absolute http(s) URL", name, p)
		}
		cs.loginURLs = append(cs.loginURLs, loginURL{origin: originOf(u), path: u.EscapedPath()})
	}
	for _, st := range s.Login.Status {
		if int64(st) < httpStatus.Min || int64(st) > httpStatus.Max {
			return nil, fmt.Errorf("service %q: login status %d is not an HTTP status", name, st)
		}
		cs.loginStatus[st] = true
	}
	if (s.CSRF.Cookie == "") != (s.CSRF.Header == "") {
		return nil, fmt.Errorf("service %q: csrf needs both cookie and header", name)
	}
	if s.CSRF.Cookie != "" {
		if !validToken(s.CSRF.Cookie) || !validToken(s.CSRF.Header) || reservedHeader(http.CanonicalHeaderKey(s.CSRF.Header)) {
			return nil, fmt.Errorf("service %q: csrf cookie and header must be valid names", name)
		}
		cs.csrfHeader = http.CanonicalHeaderKey(s.CSRF.Header)
	}
	fixed := map[string]string{}
	for k, v := range s.Headers {
		ck := http.CanonicalHeaderKey(k)
		if !validToken(k) || reservedHeader(ck) {
			return nil, fmt.Errorf("service %q: fixed header %q is not allowed", name, k)
		}
		if !validHeaderValue(v) {
			return nil, fmt.Errorf("service %q: fixed header %q has a control character", name, k)
		}
		fixed[ck] = v
	}
	for k, v := range fixed {
		cs.fixed = append(cs.fixed, headerField{k, []string{v}})
	}
	slices.SortFunc(cs.fixed, func(a, b headerField) int { return strings.Compare(a.name, b.name) })
	fq := url.Values{}
	for k, v := range s.Query {
		if k == "" || !validHeaderValue(k) || !validHeaderValue(v) {
			return nil, fmt.Errorf("service %q: fixed query parameter %q is not allowed", name, k)
		}
		fq.Set(k, v)
	}
	cs.fixedQuery = fq.Encode()
	for _, p := range s.Entry {
		cp, err := normalisePath(p)
		if err != nil || cp.query != "" {
			return nil, fmt.Errorf("service %q: entry point %q must be a path starting with / (no query)", name, p)
		}
		cs.entry = append(cs.entry, entryForm(cp.decoded))
	}
	for _, p := range cs.loginPaths {
		cs.entry = append(cs.entry, entryForm(p))
	}
	for _, l := range cs.loginURLs {
		if l.origin == o.str {
			if d, err := url.PathUnescape(l.path); err == nil {
				cs.entry = append(cs.entry, entryForm(d))
			}
		}
	}
	if _, err := netguard.ParseNetworks(s.Networks); err != nil {
		return nil, fmt.Errorf("service %q: %v", name, err)
	}
	if len(s.Networks) > maxNetworks {
		return nil, fmt.Errorf("service %q: more than %d networks", name, maxNetworks)
	}
	if len(cs.entry) > maxEntries {
		return nil, fmt.Errorf("service %q: more than %d entry points", name, maxEntries)
	}
	if s.Concurrency < 0 || s.Concurrency > maxConcurrency {
		return nil, fmt.Errorf("service %q: concurrency must be between 0 and %d", name, maxConcurrency)
	}
	return cs, nil
}

// validToken reports whether s is an RFC 7230 token (header or cookie name).
func validToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tokenByte[s[i]] {
			return false
		}
	}
	return true
}

// tokenByte marks the bytes of an RFC 7230 token.
var tokenByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
	}
	return t
}()

// validHeaderValue refuses control characters (CR, LF, NUL and the rest
// except tab).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// entryForm is the form in which paths are compared with entry points:
// each segment without its ";parameters" (a servlet container drops them
// before matching), without trailing dots and spaces (a Windows server
// drops them), in lower case (some servers match without case), each
// letter past ASCII as the lower case of its upper case, so that a letter
// a server's case-blind comparison takes for an ASCII one is that one
// (the Kelvin sign for k, the long s for s, the dotless i for i, as Java's
// equalsIgnoreCase does).
func entryForm(decoded string) string {
	if plainEntryForm(decoded) {
		return decoded
	}
	var buf [256]byte
	b, ascii := appendEntryForm(buf[:0], decoded)
	if !ascii {
		return foldPastASCII(b)
	}
	return string(b)
}

// entryFormIn is entryForm for a comparison only: an ASCII path's form is
// written into buf (on the caller's stack) when it fits, and the string
// returned may be a view of buf.
func entryFormIn(decoded string, buf *[256]byte) string {
	if plainEntryForm(decoded) {
		return decoded
	}
	b, ascii := appendEntryForm(buf[:0], decoded)
	if !ascii {
		return foldPastASCII(b)
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendEntryForm appends decoded's segments to b, each cut at ";" and
// trimmed of trailing dots and spaces, ASCII lower-cased as it is written,
// and reports whether they are all ASCII. No rune's lower case is a "/",
// ";", "." or space, so lower-casing the rest after (foldPastASCII) is
// each segment lower-cased.
func appendEntryForm(b []byte, decoded string) ([]byte, bool) {
	ascii := true
	for rest := decoded; ; {
		sg, tail, more := strings.Cut(rest, "/")
		if j := strings.IndexByte(sg, ';'); j >= 0 {
			sg = sg[:j]
		}
		for len(sg) > 0 && (sg[len(sg)-1] == '.' || sg[len(sg)-1] == ' ') {
			sg = sg[:len(sg)-1]
		}
		for i := 0; i < len(sg); i++ {
			c := sg[i]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			ascii = ascii && c < utf8.RuneSelf
			b = append(b, c)
		}
		if !more {
			return b, ascii
		}
		b = append(b, '/')
		rest = tail
	}
}

// foldPastASCII is b with each letter the lower case of its upper case.
func foldPastASCII(b []byte) string {
	return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, string(b))
}

// plainEntryForm reports whether p is its own entryForm (ASCII, no ";", no
// upper case, no segment ending in a dot or space): the common case,
// checked without allocating.
func plainEntryForm(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == ';' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			return false
		}
		if (c == '.' || c == ' ') && (i+1 == len(p) || p[i+1] == '/') {
			return false
		}
	}
	return true
}

// isEntry reports whether a decoded campus path is one of the service's
// login or hand-off entry points, also once more decoded (a server that
// decodes twice).
func (s *service) isEntry(decoded string) bool {
	if len(s.entry) == 0 {
		return false
	}
	match := func(f string) bool {
		for _, e := range s.entry {
			if prefixMatch(f, e) {
				return true
			}
		}
		return false
	}
	var buf [256]byte
	if match(entryFormIn(decoded, &buf)) {
		return true
	}
	if strings.IndexByte(decoded, '%') >= 0 {
		if d2, err := url.PathUnescape(decoded); err == nil {
			return match(entryFormIn(d2, &buf))
		}
	}
	return false
}
