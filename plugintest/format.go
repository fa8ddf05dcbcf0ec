package plugintest

import (
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
	"go.yaml.in/yaml/v3"
)

// Limits of the test format.
const (
	MaxCases     = 200 // cases in one document
	MaxExchanges = 50  // recorded exchanges in one case
	MaxBodyBytes = 1 << 20
)

// Suite is every test case of a document.
type Suite struct {
	Plugin *manifest.Plugin
	Files  []*File
}

// Cases lists every case of every file, in order.
func (s *Suite) Cases() []*Case {
	var out []*Case
	for _, f := range s.Files {
		out = append(out, f.Cases...)
	}
	return out
}

// File is one tests/NAME.yaml file or "yaml test NAME" block.
type File struct {
	Name  string
	Pos   diag.Pos
	Cases []*Case
}

// Case is one test case.
type Case struct {
	Name      string
	File      string // the test file's name
	Pos       diag.Pos
	Tool      string
	Input     map[string]any
	Actor     string // user | agent | scheduler
	Trust     string // official | community
	Tainted   bool
	Approve   *bool // nil: nobody can be asked; false: the user declines
	Prefs     map[string]any
	KV        map[string]any // the plugin's store before the call
	Secrets   proxy.Secrets
	Now       *time.Time // jq's now during the case, fixed (nil: the runner's clock)
	Exchanges []*Exchange
	Expect    Expect
}

// Exchange is one recorded request and the response that answers it.
type Exchange struct {
	Pos     diag.Pos
	Service string // a campus service, or
	Origin  string // a declared web origin, normalised (manifest.Origin.String)
	Method  string
	Path    string
	Query   url.Values // nil: any query; else exactly these (besides the service's fixed parameters)
	Form    url.Values // when set, the request's form body must be exactly this
	JSON    any        // when set (HasJSON), the request's JSON body must equal it
	HasJSON bool
	Session *bool // nil: expected when the case has secrets for the service
	Repeat  bool  // may answer more than once
	Resp    Response
}

// Response is a recorded response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Expect is what a case must produce. Output, JQ and Status apply to a
// result; Error to a failure; Refused to a permission refusal.
type Expect struct {
	Output    any
	HasOutput bool
	JQ        []Assertion
	Error     string
	Status    string
	Refused   string
	KV        map[string]any // keys of the plugin's store after the call (null: absent)
}

// Assertion is a jq program that must yield true, or (with HasEquals) a
// value equal to Equals.
type Assertion struct {
	Src       string
	Pos       diag.Pos
	Code      *steps.JQ // hardened as a step's programs are
	Equals    any
	HasEquals bool
}

var (
	fileKeys     = []string{"trust", "secrets", "cases"}
	caseKeys     = []string{"name", "tool", "input", "actor", "trust", "tainted", "approve", "prefs", "kv", "secrets", "now", "exchanges", "expect"}
	exchangeKeys = []string{"request", "response", "repeat"}
	requestKeys  = []string{"service", "origin", "method", "path", "query", "form", "json", "session"}
	responseKeys = []string{"status", "headers", "json", "body", "charset"}
	expectKeys   = []string{"output", "jq", "error", "status", "refused", "kv"}
	secretKeys   = []string{"cookies", "headers"}
	refusals     = []string{"unknown_tool", "unavailable", "disabled", "user_only", "scheduler_not_read", "mode_off",
		"scheduler_ask", "always_ask", "mode_ask", "tainted", "bad_input", "declined", "no_approver", "any"}
)

var statusRE = regexp.MustCompile(`^[a-z][a-z_]*$`)

// Parse reads the document's test files. Every problem is in the list, at
// its file position.
func Parse(p *manifest.Plugin) (*Suite, diag.List) {
	var l diag.List
	s := &Suite{Plugin: p}
	n := 0
	for _, b := range p.Tests {
		f := parseFile(p, b, &l)
		if f == nil {
			continue
		}
		n += len(f.Cases)
		if n > MaxCases {
			l.Errorf(f.Pos, "more than %d test cases", MaxCases)
			break
		}
		s.Files = append(s.Files, f)
	}
	seen := map[string]diag.Pos{}
	for _, c := range s.Cases() {
		key := c.File + "\x00" + c.Name
		if prev, dup := seen[key]; dup {
			l.Errorf(c.Pos, "case %q is defined twice in %s (also at %s)", c.Name, c.File, prev)
		}
		seen[key] = c.Pos
	}
	l.Sort()
	return s, l
}

func parseFile(p *manifest.Plugin, b *manifest.Block, l *diag.List) *File {
	d := b.Doc
	if d == nil || !d.Safe() {
		if d != nil && d.Root == nil && !l.HasErrors() {
			l.Errorf(b.Pos, "test %q is empty: it needs cases", b.Name)
		}
		return nil
	}
	f := &File{Name: b.Name, Pos: d.NodePos(d.Root)}
	m, ok := d.Mapping(d.Root, "a test file", fileKeys, l)
	if !ok {
		return nil
	}
	trust := "community"
	if x, ok := m.Get("trust"); ok {
		trust = parseTrust(d, x.Value, l)
	}
	var secrets proxy.Secrets
	if x, ok := m.Get("secrets"); ok {
		secrets = parseSecrets(d, x.Value, l)
	}
	x, ok := m.Get("cases")
	if !ok {
		l.Errorf(f.Pos, "a test file needs cases: a list of test cases")
		return nil
	}
	if x.Value.Kind != yaml.SequenceNode || len(x.Value.Content) == 0 {
		l.Errorf(d.NodePos(x.Value), "cases must be a non-empty list of test cases")
		return nil
	}
	for i, cn := range x.Value.Content {
		c := parseCase(p, d, cn, i, l)
		if c == nil {
			continue
		}
		c.File = f.Name
		if c.Trust == "" {
			c.Trust = trust
		}
		c.Secrets = mergeSecrets(secrets, c.Secrets)
		f.Cases = append(f.Cases, c)
	}
	return f
}

func parseTrust(d *yamlx.Doc, n *yaml.Node, l *diag.List) string {
	s, ok := d.String(n, "trust", l)
	if ok && s != "official" && s != "community" {
		l.Errorf(d.NodePos(n), "trust %q must be official or community", s)
	}
	return s
}

func parseCase(p *manifest.Plugin, d *yamlx.Doc, n *yaml.Node, i int, l *diag.List) *Case {
	m, ok := d.Mapping(n, "a test case", caseKeys, l)
	if !ok {
		return nil
	}
	c := &Case{Pos: d.NodePos(n), Actor: "user", Name: "case " + strconv.Itoa(i+1), Input: map[string]any{}}
	good := true
	str := func(key string) (string, *yaml.Node) {
		x, ok := m.Get(key)
		if !ok {
			return "", nil
		}
		s, ok := d.String(x.Value, key, l)
		good = good && ok
		return s, x.Value
	}
	boolean := func(key string) bool {
		x, ok := m.Get(key)
		if !ok {
			return false
		}
		v, ok := d.Bool(x.Value, key, l)
		good = good && ok
		return v
	}
	if s, _ := str("name"); s != "" {
		c.Name = s
	}
	tool, tn := str("tool")
	switch {
	case tn == nil:
		l.Errorf(c.Pos, "case %q needs tool: the name of the tool it calls", c.Name)
		good = false
	case p.Tool(tool) == nil && p.Broken[tool]:
		good = false // the tool's own error is reported
	case p.Tool(tool) == nil:
		names := make([]string, 0, len(p.Tools))
		for _, t := range p.Tools {
			names = append(names, t.Name)
		}
		msg := "case " + strconv.Quote(c.Name) + " calls tool " + strconv.Quote(tool) + ", which the document does not define"
		if s := yamlx.Suggest(tool, names); s != "" {
			msg += " (did you mean " + strconv.Quote(s) + "?)"
		}
		l.Errorf(d.NodePos(tn), "%s", msg)
		good = false
	}
	c.Tool = tool
	if x, ok := m.Get("input"); ok {
		c.Input = object(d, x.Value, "input", l)
		good = good && c.Input != nil
	}
	if x, ok := m.Get("prefs"); ok {
		c.Prefs = object(d, x.Value, "prefs", l)
		good = good && c.Prefs != nil
	}
	if x, ok := m.Get("kv"); ok {
		c.KV = object(d, x.Value, "kv", l)
		good = good && c.KV != nil
	}
	if s, sn := str("actor"); sn != nil {
		if s != "user" && s != "agent" && s != "scheduler" {
			l.Errorf(d.NodePos(sn), "actor %q must be user, agent or scheduler", s)
			good = false
		}
		c.Actor = s
	}
	if x, ok := m.Get("trust"); ok {
		c.Trust = parseTrust(d, x.Value, l)
	}
	c.Tainted = boolean("tainted")
	if _, ok := m.Get("approve"); ok {
		v := boolean("approve")
		c.Approve = &v
	}
	if x, ok := m.Get("secrets"); ok {
		c.Secrets = parseSecrets(d, x.Value, l)
	}
	if x, ok := m.Get("now"); ok {
		// Unquoted, YAML reads an RFC 3339 time as a timestamp: its text
		// is taken as written.
		sn := x.Value
		s := sn.Value
		if sn.Kind != yaml.ScalarNode || (sn.Tag != "!!timestamp" && sn.Tag != "!!str") {
			s = yamlx.Describe(sn)
		}
		at, err := time.Parse(time.RFC3339, s)
		switch {
		case err != nil:
			l.Errorf(d.NodePos(sn), "now %q is not an RFC 3339 time such as 2026-04-27T12:00:00+08:00", s)
			good = false
		case at.UTC().Year() < 1 || at.UTC().Year() > 9999:
			l.Errorf(d.NodePos(sn), "now %q is outside the years 0001 to 9999", s)
			good = false
		default:
			c.Now = &at
		}
	}
	if x, ok := m.Get("exchanges"); ok {
		if x.Value.Kind != yaml.SequenceNode {
			l.Errorf(d.NodePos(x.Value), "exchanges must be a list of {request, response}, not %s", yamlx.Describe(x.Value))
			good = false
		} else if len(x.Value.Content) > MaxExchanges {
			l.Errorf(d.NodePos(x.Value), "more than %d exchanges in one case", MaxExchanges)
			good = false
		} else {
			for _, en := range x.Value.Content {
				e := parseExchange(p, d, en, l)
				if e == nil {
					good = false
					continue
				}
				c.Exchanges = append(c.Exchanges, e)
			}
		}
	}
	if x, ok := m.Get("expect"); !ok {
		l.Errorf(c.Pos, "case %q needs expect: output, jq, error, status, refused or kv", c.Name)
		good = false
	} else if !parseExpect(d, x.Value, &c.Expect, l) {
		good = false
	}
	if !good {
		return nil
	}
	return c
}

// exactValue is a node's value with integers beyond int64 kept exact.
func exactValue(d *yamlx.Doc, n *yaml.Node, l *diag.List) (any, bool) {
	v, ok := d.Value(n, l)
	if !ok {
		return nil, false
	}
	return exactNumbers(n, v), true
}

func object(d *yamlx.Doc, n *yaml.Node, what string, l *diag.List) map[string]any {
	if n.Kind != yaml.MappingNode {
		l.Errorf(d.NodePos(n), "%s must be a mapping, not %s", what, yamlx.Describe(n))
		return nil
	}
	v, ok := d.Value(n, l)
	if !ok {
		return nil
	}
	return v.(map[string]any)
}

func parseSecrets(d *yamlx.Doc, n *yaml.Node, l *diag.List) proxy.Secrets {
	m, ok := d.Mapping(n, "secrets", nil, l)
	if !ok {
		return nil
	}
	out := proxy.Secrets{}
	for _, f := range m.Fields {
		sm, ok := d.Mapping(f.Value, "secrets of "+strconv.Quote(f.Key), secretKeys, l)
		if !ok {
			continue
		}
		ss := &proxy.ServiceSecrets{Cookies: map[string]string{}, Headers: map[string]string{}}
		if x, ok := sm.Get("cookies"); ok {
			ss.Cookies, _ = d.StringMap(x.Value, "cookies", l)
		}
		if x, ok := sm.Get("headers"); ok {
			h, _ := d.StringMap(x.Value, "headers", l)
			ss.Headers = map[string]string{}
			for k, v := range h {
				ss.Headers[http.CanonicalHeaderKey(k)] = v
			}
		}
		for _, vals := range []map[string]string{ss.Cookies, ss.Headers} {
			for k, v := range vals {
				if len(v) < 4 || strings.TrimSpace(v) != v {
					l.Errorf(d.NodePos(f.Value), "the value of %s of service %q must have at least 4 characters and no surrounding spaces (short values cannot be redacted)", k, f.Key)
				}
			}
		}
		out[f.Key] = ss
	}
	return out
}

// mergeSecrets returns base with over's services replacing base's.
func mergeSecrets(base, over proxy.Secrets) proxy.Secrets {
	if len(base) == 0 {
		return over
	}
	out := maps.Clone(base)
	maps.Copy(out, over)
	return out
}

func parseExchange(p *manifest.Plugin, d *yamlx.Doc, n *yaml.Node, l *diag.List) *Exchange {
	m, ok := d.Mapping(n, "an exchange", exchangeKeys, l)
	if !ok {
		return nil
	}
	e := &Exchange{Pos: d.NodePos(n), Method: "GET", Resp: Response{Status: 200, Header: http.Header{}}}
	if x, ok := m.Get("repeat"); ok {
		e.Repeat, _ = d.Bool(x.Value, "repeat", l)
	}
	rq, ok := m.Get("request")
	if !ok {
		l.Errorf(e.Pos, "an exchange needs request: {service, method, path, query}")
		return nil
	}
	if !parseRequest(p, d, rq.Value, e, l) {
		return nil
	}
	rs, ok := m.Get("response")
	if !ok {
		l.Errorf(e.Pos, "an exchange needs response: {status, headers, json or body}")
		return nil
	}
	if !parseResponse(d, rs.Value, &e.Resp, l) {
		return nil
	}
	return e
}

func parseRequest(p *manifest.Plugin, d *yamlx.Doc, n *yaml.Node, e *Exchange, l *diag.List) bool {
	m, ok := d.Mapping(n, "request", requestKeys, l)
	if !ok {
		return false
	}
	good := true
	sx, hasService := m.Get("service")
	ox, hasOrigin := m.Get("origin")
	switch {
	case hasService && hasOrigin:
		l.Errorf(d.NodePos(n), "a request has service (a campus service) or origin (a web origin), not both")
		good = false
	case hasService:
		e.Service, good = d.String(sx.Value, "service", l)
		if good {
			if _, declared := p.Access.Service(e.Service); !declared {
				l.Errorf(d.NodePos(sx.Value), "service %q is not in the document's access.campus", e.Service)
				good = false
			}
		}
	case hasOrigin:
		good = parseOrigin(p, d, ox.Value, e, l)
	case len(p.Access.Campus) == 1:
		e.Service = p.Access.Campus[0].Service
	case len(p.Access.Campus) == 0 && len(p.Access.Web) == 1:
		e.Origin = p.Access.Web[0].String()
	default:
		l.Errorf(d.NodePos(n), "request needs service or origin: the document declares %s and %s",
			plural(len(p.Access.Campus), "campus service"), plural(len(p.Access.Web), "web origin"))
		good = false
	}
	if x, ok := m.Get("method"); ok {
		s, ok := d.String(x.Value, "method", l)
		e.Method = strings.ToUpper(s)
		switch e.Method {
		case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE":
		default:
			if ok {
				l.Errorf(d.NodePos(x.Value), "method %q must be GET, HEAD, POST, PUT, PATCH or DELETE", s)
			}
			good = false
		}
	}
	if x, ok := m.Get("path"); !ok {
		l.Errorf(d.NodePos(n), "request needs path (the query goes in query)")
		good = false
	} else if s, ok := d.String(x.Value, "path", l); ok {
		if !strings.HasPrefix(s, "/") || strings.ContainsAny(s, "?#") {
			l.Errorf(d.NodePos(x.Value), "path %q must start with / and hold no ? or # (the query goes in query)", s)
			good = false
		}
		e.Path = s
	} else {
		good = false
	}
	values := func(key string) url.Values {
		x, ok := m.Get(key)
		if !ok {
			return nil
		}
		mm, ok := d.Mapping(x.Value, key, nil, l)
		if !ok {
			good = false
			return nil
		}
		out := url.Values{}
		for _, f := range mm.Fields {
			v, ok := scalarText(d, f.Value, key+" value "+strconv.Quote(f.Key), l)
			good = good && ok
			out.Add(f.Key, v)
		}
		return out
	}
	e.Query = values("query")
	e.Form = values("form")
	if x, ok := m.Get("json"); ok {
		v, ok := exactValue(d, x.Value, l)
		good = good && ok
		e.JSON, e.HasJSON = normalize(v), true
	}
	if x, ok := m.Get("session"); ok {
		v, ok := d.Bool(x.Value, "session", l)
		good = good && ok
		e.Session = &v
		if ok && v && e.Origin != "" {
			l.Errorf(d.NodePos(x.Value), "a web request carries no session: session: true goes with a campus service")
			good = false
		}
	}
	return good
}

// parseOrigin reads a request's web origin: one the document declares in
// access.web, compared normalised (https://News.Example.edu.cn:443 is
// https://news.example.edu.cn).
func parseOrigin(p *manifest.Plugin, d *yamlx.Doc, n *yaml.Node, e *Exchange, l *diag.List) bool {
	s, ok := d.String(n, "origin", l)
	if !ok {
		return false
	}
	o, err := manifest.ParseOrigin(s)
	if err != nil {
		l.Errorf(d.NodePos(n), "origin %q: %v", s, err)
		return false
	}
	var declared []string
	for _, w := range p.Access.Web {
		if w.Scheme == o.Scheme && w.Host == o.Host && w.Port == o.Port {
			e.Origin = w.String()
			return true
		}
		declared = append(declared, w.String())
	}
	msg := "origin " + strconv.Quote(s) + " is not in the document's access.web"
	if sg := yamlx.Suggest(o.String(), declared); sg != "" {
		msg += " (did you mean " + strconv.Quote(sg) + "?)"
	}
	l.Errorf(d.NodePos(n), "%s", msg)
	return false
}

// scalarText reads a string, number or boolean scalar as its text (query
// values are text on the wire).
func scalarText(d *yamlx.Doc, n *yaml.Node, what string, l *diag.List) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.Errorf(d.NodePos(n), "%s must be a string, number or boolean, not %s", what, yamlx.Describe(n))
		return "", false
	}
	return n.Value, true
}

func parseResponse(d *yamlx.Doc, n *yaml.Node, r *Response, l *diag.List) bool {
	m, ok := d.Mapping(n, "response", responseKeys, l)
	if !ok {
		return false
	}
	good := true
	if x, ok := m.Get("status"); ok {
		v, ok := d.Int(x.Value, "status", l)
		if ok && (v < 100 || v > 599) {
			l.Errorf(d.NodePos(x.Value), "status %d is not an HTTP status", v)
			ok = false
		}
		good = good && ok
		r.Status = int(v)
	}
	if x, ok := m.Get("headers"); ok {
		h, ok := d.StringMap(x.Value, "headers", l)
		good = good && ok
		for k, v := range h {
			r.Header.Set(k, v)
		}
	}
	_, hasJSON := m.Get("json")
	_, hasBody := m.Get("body")
	if hasJSON && hasBody {
		l.Errorf(d.NodePos(n), "a response has json or body, not both")
		return false
	}
	switch {
	case hasJSON:
		x, _ := m.Get("json")
		v, ok := exactValue(d, x.Value, l)
		if !ok {
			return false
		}
		b, err := marshal(v)
		if err != nil {
			l.Errorf(d.NodePos(x.Value), "json: %v", err)
			return false
		}
		r.Body = b
		if r.Header.Get("Content-Type") == "" {
			r.Header.Set("Content-Type", "application/json;charset=UTF-8")
		}
	case hasBody:
		x, _ := m.Get("body")
		s, ok := d.String(x.Value, "body", l)
		if !ok {
			return false
		}
		r.Body = []byte(s)
		if r.Header.Get("Content-Type") == "" {
			if strings.HasPrefix(strings.TrimSpace(s), "<") {
				r.Header.Set("Content-Type", "text/html; charset=UTF-8")
			} else {
				r.Header.Set("Content-Type", "text/plain; charset=UTF-8")
			}
		}
	}
	if len(r.Body) > MaxBodyBytes {
		l.Errorf(d.NodePos(n), "the response body is more than %d bytes", MaxBodyBytes)
		return false
	}
	if x, ok := m.Get("charset"); ok {
		cs, ok := d.String(x.Value, "charset", l)
		if !ok {
			return false
		}
		enc, err := encodeCharset(r.Body, cs)
		if err != nil {
			l.Errorf(d.NodePos(x.Value), "charset %q: %v", cs, err)
			return false
		}
		r.Body = enc
		if ct := r.Header.Get("Content-Type"); ct != "" && !strings.Contains(strings.ToLower(ct), "charset="+strings.ToLower(cs)) {
			base, _, _ := strings.Cut(ct, ";")
			r.Header.Set("Content-Type", base+"; charset="+cs)
		}
	}
	return good
}

func parseExpect(d *yamlx.Doc, n *yaml.Node, e *Expect, l *diag.List) bool {
	m, ok := d.Mapping(n, "expect", expectKeys, l)
	if !ok {
		return false
	}
	if len(m.Fields) == 0 {
		l.Errorf(d.NodePos(n), "expect needs output, jq, error, status, refused or kv")
		return false
	}
	good := true
	if x, ok := m.Get("output"); ok {
		v, ok := exactValue(d, x.Value, l)
		good = good && ok
		e.Output, e.HasOutput = normalize(v), true
	}
	if x, ok := m.Get("status"); ok {
		s, ok := d.String(x.Value, "status", l)
		if ok && !statusRE.MatchString(s) {
			l.Errorf(d.NodePos(x.Value), "status %q must match [a-z][a-z_]* (e.g. login_required)", s)
			ok = false
		}
		good = good && ok
		e.Status = s
	}
	if x, ok := m.Get("error"); ok {
		s, ok := d.String(x.Value, "error", l)
		good = good && ok
		e.Error = s
		if ok && s == "" {
			l.Errorf(d.NodePos(x.Value), "error must be a part of the expected message, not empty")
			good = false
		}
	}
	if x, ok := m.Get("refused"); ok {
		s, ok := d.String(x.Value, "refused", l)
		if ok && !contains(refusals, s) {
			msg := "refused " + strconv.Quote(s) + " is not a refusal reason (" + strings.Join(refusals, ", ") + ")"
			if sg := yamlx.Suggest(s, refusals); sg != "" {
				msg = "refused " + strconv.Quote(s) + " is not a refusal reason (did you mean " + strconv.Quote(sg) + "?)"
			}
			l.Errorf(d.NodePos(x.Value), "%s", msg)
			ok = false
		}
		good = good && ok
		e.Refused = s
	}
	if x, ok := m.Get("kv"); ok {
		if e.KV = object(d, x.Value, "expect.kv", l); e.KV == nil {
			good = false
		} else {
			if len(e.KV) == 0 {
				l.Errorf(d.NodePos(x.Value), "expect.kv lists no key: it would assert nothing")
				good = false
			}
			exactNumbers(x.Value, e.KV)
			for k, v := range e.KV {
				e.KV[k] = normalize(v)
			}
		}
	}
	if x, ok := m.Get("jq"); ok {
		if x.Value.Kind != yaml.SequenceNode {
			l.Errorf(d.NodePos(x.Value), "jq must be a list of assertions: a jq condition, or {expr: PROGRAM, equals: VALUE}")
			good = false
		} else if len(x.Value.Content) == 0 {
			l.Errorf(d.NodePos(x.Value), "jq lists no assertion: it would assert nothing")
			good = false
		} else {
			for _, an := range x.Value.Content {
				a, ok := parseAssertion(d, an, l)
				good = good && ok
				if ok {
					e.JQ = append(e.JQ, a)
				}
			}
		}
	}
	outcomes := 0
	for _, b := range []bool{e.HasOutput || e.Status != "" || len(e.JQ) > 0, e.Error != "", e.Refused != ""} {
		if b {
			outcomes++
		}
	}
	if outcomes > 1 {
		l.Errorf(d.NodePos(n), "expect holds a result (output, jq, status), an error or a refusal: only one of them")
		good = false
	}
	return good
}

func parseAssertion(d *yamlx.Doc, n *yaml.Node, l *diag.List) (Assertion, bool) {
	a := Assertion{Pos: d.NodePos(n)}
	src := n
	if n.Kind == yaml.MappingNode {
		m, ok := d.Mapping(n, "a jq assertion", []string{"expr", "equals"}, l)
		if !ok {
			return a, false
		}
		x, ok := m.Get("expr")
		if !ok {
			l.Errorf(a.Pos, "a jq assertion needs expr")
			return a, false
		}
		src = x.Value
		if y, ok := m.Get("equals"); ok {
			v, ok := exactValue(d, y.Value, l)
			if !ok {
				return a, false
			}
			a.Equals, a.HasEquals = normalize(v), true
		}
	}
	s, ok := d.String(src, "a jq assertion", l)
	if !ok {
		return a, false
	}
	a.Src = s
	lim := steps.DefaultLimits()
	code := steps.CompileStandalone(s, &lim, d.NodePos(src), l)
	if code == nil {
		return a, false
	}
	a.Code = code
	return a, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sortedKeys lists a map's keys sorted.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
