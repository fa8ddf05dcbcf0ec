package plugintest

import (
	"cmp"
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

// fileDecl declares a test file, and caseDecl, exchangeDecl, requestDecl,
// responseDecl, expectDecl and assertionDecl its parts: the decoder, the
// JSON Schema (docs/schema/test.schema.json) and the reference tables read
// them. What no type can say (a declared tool, service or origin, which
// keys go together) is checked on the decoded values, and the schema says
// it too where it can (Decl.Schema).
var fileDecl = &yamlx.Decl{Name: "a test file", Title: "A PKU harness test file (tests/NAME.yaml or a fenced yaml test NAME block)",
	Doc: "Reference: docs/plugin-format.md, Tests. Run with harness test PATH.", Fields: []yamlx.Field{
		{Name: "trust", Type: trustEnum, Default: "community", Doc: "The default trust of the cases."},
		{Name: "secrets", Type: secretsType{}, Doc: "Session values per campus service, for every case (fake values)."},
		{Name: "cases", Type: yamlx.Later{Of: yamlx.List{Of: yamlx.Later{Of: yamlx.Object{Decl: caseDecl}}, Min: 1, Max: MaxCases,
			Items: "test cases", Empty: "lists no test case: a test file needs at least one"}}, Required: true,
			Need: "a list of test cases", Doc: "The test cases."},
	}}

var trustEnum = yamlx.Enum{Values: []string{"official", "community"}}

var caseDecl = &yamlx.Decl{Name: "a test case", Def: "case", Fields: []yamlx.Field{
	{Name: "name", Type: yamlx.String{}, Doc: "Shown in reports; unique within the file (default: case N)."},
	{Name: "tool", Type: yamlx.String{}, Required: true, Need: "the name of the tool it calls", Doc: "The name of the tool the case calls."},
	{Name: "input", Type: jsonMap{}, Doc: "The input object (default {}), validated against the tool's schema."},
	{Name: "actor", Type: yamlx.Enum{Values: []string{"user", "agent", "scheduler"}}, Default: "user", Doc: "Who calls the tool."},
	{Name: "trust", Type: trustEnum, Doc: "Default: the file's trust, else community."},
	{Name: "tainted", Type: yamlx.Bool{}, Default: false, Doc: "The agent's turn has read untrusted data."},
	{Name: "approve", Type: yamlx.Bool{}, Doc: "Where the rules ask: true the user says yes, once ($grant is once), false the user says no (declined); absent, nobody can be asked (no_approver)."},
	{Name: "prefs", Type: jsonMap{}, Doc: "Preference values (default: the document's defaults)."},
	{Name: "kv", Type: jsonMap{}, Doc: "The plugin's store before the call: {KEY: VALUE}."},
	{Name: "secrets", Type: secretsType{}, Doc: "Replace the file's secrets for the services they name."},
	{Name: "now", Type: nowType{}, Doc: "jq's now during the case, fixed (RFC 3339, e.g. 2026-04-27T12:00:00+08:00); default: HARNESS_NOW running on from its instant, else the real time."},
	{Name: "exchanges", Type: yamlx.Later{Of: yamlx.List{Of: yamlx.Object{Decl: exchangeDecl}, Max: MaxExchanges}},
		Doc: "The recorded requests and responses the tool's requests meet."},
	{Name: "expect", Type: yamlx.Later{Of: yamlx.Object{Decl: expectDecl}}, Required: true,
		Need: "output, jq, error, status, refused or kv", Doc: "What must come out."},
}}

var exchangeDecl = &yamlx.Decl{Name: "an exchange", Doc: "A recorded request and the response that answers it.", Fields: []yamlx.Field{
	{Name: "request", Type: yamlx.Later{Of: yamlx.Object{Decl: requestDecl}}, Required: true, Need: "{service or origin, method, path, query}",
		Doc: "What the tool's request must be."},
	{Name: "response", Type: yamlx.Later{Of: yamlx.Object{Decl: responseDecl}}, Required: true, Need: "{status, headers, json or body}",
		Doc: "What answers it."},
	{Name: "repeat", Type: yamlx.Bool{}, Default: false, Doc: "May answer more than once."},
}}

// params is a query or form: each parameter's value, or its values in
// order when it is repeated.
var params = yamlx.MapOf{Of: paramValues{}}

// paramValues is a parameter's value: a string, number or boolean, or a
// list of them for a parameter repeated in that order (a=1&a=2 is
// a: [1, 2]); it decodes to []string.
type paramValues struct{}

func (paramValues) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	var items []*yaml.Node
	switch {
	case n != nil && n.Kind == yaml.SequenceNode && len(n.Content) == 0:
		c.Errorf(n, "%s is an empty list: a repeated parameter lists its values in order (leave out a parameter the request does not have)", what)
		return nil, false
	case n != nil && n.Kind == yaml.SequenceNode:
		items = n.Content
	default:
		items = []*yaml.Node{n}
	}
	out := make([]string, 0, len(items))
	ok := true
	for _, x := range items {
		if x == nil || x.Kind != yaml.ScalarNode || x.Tag == "!!null" {
			if x != n {
				c.Errorf(x, "%s must list strings, numbers or booleans, not %s", what, yamlx.Describe(x))
			} else {
				c.Errorf(x, "%s must be a string, number or boolean, or a list of them for a repeated parameter, not %s", what, yamlx.Describe(x))
			}
			ok = false
			continue
		}
		out = append(out, x.Value)
	}
	return out, ok
}

func (paramValues) Schema(g *yamlx.Gen) map[string]any {
	one := yamlx.Scalar{}.Schema(g)
	return map[string]any{"oneOf": []any{one, map[string]any{"type": "array", "items": yamlx.Scalar{}.Schema(g), "minItems": 1}}}
}
func (paramValues) Name() string { return "string, number or boolean, or a list of them" }

var requestDecl = &yamlx.Decl{Name: "request", Schema: map[string]any{"not": map[string]any{"required": []any{"service", "origin"}}},
	Fields: []yamlx.Field{
		{Name: "service", Type: yamlx.String{}, Doc: "A campus service of access.campus; may be left out when the document declares one campus service."},
		{Name: "origin", Type: yamlx.SchemaPlus{Type: yamlx.String{}, Extra: map[string]any{"pattern": "^[hH][tT][tT][pP][sS]?://[^/?#]+/?$"}},
			Doc: "A web origin of access.web (scheme://host[:port]); may be left out when the document declares one web origin and no campus service."},
		{Name: "method", Type: yamlx.Enum{Values: []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}, Fold: true}, Default: "GET",
			Doc: "The HTTP method."},
		{Name: "path", Type: yamlx.SchemaPlus{Type: yamlx.String{}, Extra: map[string]any{"pattern": "^/[^?#]*$"}}, Required: true, Need: "the query goes in query",
			Doc: "Exact; the query goes in query."},
		{Name: "query", Type: params, Doc: "The exact set of parameters (besides those the catalogue adds); a list is the parameter repeated, in that order."},
		{Name: "form", Type: params, Doc: "The form body must be exactly this; a list is the field repeated, in that order."},
		{Name: "json", Type: yamlx.Any{}, Doc: "The JSON body must equal this."},
		{Name: "session", Type: yamlx.Bool{}, Doc: "true: the request carries the case's session; false: no session value at all (campus requests only)."},
	}}

var responseDecl = &yamlx.Decl{Name: "response", Schema: map[string]any{"not": map[string]any{"required": []any{"json", "body"}}},
	Fields: []yamlx.Field{
		{Name: "status", Type: yamlx.Int{Min: 100, Max: 599, Hint: "an HTTP status"}, Default: int64(200), Doc: "The HTTP status."},
		{Name: "headers", Type: yamlx.MapOf{Of: yamlx.String{}}, Doc: "Response headers."},
		{Name: "json", Type: yamlx.Any{}, Doc: "The body as JSON (Content-Type application/json)."},
		{Name: "body", Type: yamlx.String{}, Doc: "The body as text (text/html when it starts with <, else text/plain)."},
		{Name: "charset", Type: yamlx.String{}, Doc: "Send the text encoded in this charset (e.g. gbk)."},
	}}

var refusals = []string{"unknown_tool", "unavailable", "disabled", "user_only", "scheduler_not_read", "mode_off",
	"scheduler_ask", "always_ask", "mode_ask", "tainted", "bad_input", "declined", "no_approver", "any"}

var statusRE = regexp.MustCompile(`^[a-z][a-z_]*$`)

var expectDecl = &yamlx.Decl{Name: "expect", Doc: "Exactly one kind of outcome: a result (output, jq, status), an error or a refusal; kv may go with any.",
	Schema: map[string]any{"minProperties": 1, "dependentSchemas": map[string]any{
		"error":   map[string]any{"not": map[string]any{"anyOf": []any{req("output"), req("jq"), req("status"), req("refused")}}},
		"refused": map[string]any{"not": map[string]any{"anyOf": []any{req("output"), req("jq"), req("status")}}},
	}},
	Fields: []yamlx.Field{
		{Name: "output", Type: yamlx.Any{}, Doc: "The exact JSON result."},
		{Name: "jq", Type: yamlx.List{Of: assertionType{yamlx.Either{Scalar: yamlx.String{}, Mapping: yamlx.Object{Decl: assertionDecl}}}, Min: 1,
			Items: "assertions (a jq condition, or {expr: PROGRAM, equals: VALUE})", Empty: "lists no assertion: it would assert nothing"},
			Doc: "Assertions: a jq condition that must give true, or {expr, equals}."},
		{Name: "error", Type: yamlx.SchemaPlus{Type: yamlx.String{}, Extra: map[string]any{"minLength": 1}}, Doc: "A part of the failure message."},
		{Name: "status", Type: yamlx.String{Pattern: statusRE, Hint: "[a-z][a-z_]* (e.g. login_required)"}, Doc: "The result is a status object with this status."},
		{Name: "refused", Type: refusalType{}, Doc: "The permission rule's reason."},
		{Name: "kv", Type: yamlx.SchemaPlus{Type: jsonMap{}, Extra: map[string]any{"minProperties": 1}}, Doc: "The plugin's store after the call (null: the key is absent)."},
	}}

var assertionDecl = &yamlx.Decl{Name: "a jq assertion", Fields: []yamlx.Field{
	{Name: "expr", Type: yamlx.String{}, Required: true, Doc: "A jq program run on the result."},
	{Name: "equals", Type: yamlx.Any{}, Doc: "The value expr must give."},
}}

func req(k string) map[string]any { return map[string]any{"required": []any{k}} }

// TestSchema is the JSON Schema of a test file, generated from the
// declarations (docs/schema/test.schema.json).
func TestSchema() map[string]any {
	g := yamlx.NewGen()
	return yamlx.SchemaFile("https://pkuinfo.github.io/harness/schema/test.schema.json", fileDecl.Title, fileDecl.Doc, g.Object(fileDecl), g)
}

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

// parser holds what a test file's checks read: the document and the
// decoding.
type parser struct {
	p *manifest.Plugin
	c *yamlx.Ctx
}

func (ps *parser) errorf(n *yaml.Node, format string, args ...any) bool {
	ps.c.Errorf(n, format, args...)
	return false
}

func parseFile(p *manifest.Plugin, b *manifest.Block, l *diag.List) *File {
	d := b.Doc
	if d == nil || !d.Safe() {
		if d != nil && d.Root == nil && !l.HasErrors() {
			l.Errorf(b.Pos, "test %q is empty: it needs cases", b.Name)
		}
		return nil
	}
	ps := &parser{p: p, c: yamlx.NewCtx(d, l, nil)}
	o, _ := ps.c.Object(d.Root, fileDecl)
	if list, _, _ := ps.c.Later(o, "cases"); list == nil {
		return nil // absent, or not a list of at least one (said)
	}
	cn := o.NodeOf("cases")
	f := &File{Name: b.Name, Pos: d.NodePos(d.Root)}
	secrets, _ := o.Value("secrets").(proxy.Secrets)
	for i, n := range cn.Content {
		if c := ps.parseCase(o, n, i); c != nil {
			c.File = f.Name
			c.Trust = cmp.Or(c.Trust, o.String("trust"))
			c.Secrets = mergeSecrets(secrets, c.Secrets)
			f.Cases = append(f.Cases, c)
		}
	}
	return f
}

// parseCase decodes one case; nil when anything in it is wrong (a case
// that is half right never runs).
func (ps *parser) parseCase(file *yamlx.Obj, n *yaml.Node, i int) *Case {
	c := &Case{Pos: ps.c.Doc.NodePos(n), Name: "case " + strconv.Itoa(i+1)}
	if v := yamlx.Lookup(n, "name"); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" {
		c.Name = v.Value
	}
	decl := *caseDecl
	decl.Name = "case " + strconv.Quote(c.Name)
	o, _ := ps.c.Object(n, &decl)
	if o == nil {
		return nil
	}
	good := fieldsOK(o)
	c.Tool, c.Actor, c.Trust, c.Tainted = o.String("tool"), o.String("actor"), o.String("trust"), o.Bool("tainted")
	c.Input, c.Prefs, c.KV = asMap(o.Value("input")), asMap(o.Value("prefs")), asMap(o.Value("kv"))
	if c.Input == nil {
		c.Input = map[string]any{}
	}
	c.Secrets, _ = o.Value("secrets").(proxy.Secrets)
	c.Now, _ = o.Value("now").(*time.Time)
	if v, set := o.Get("approve"); set {
		b := v.Value.(bool)
		c.Approve = &b
	}
	if v, set := o.Get("tool"); set && ps.p.Tool(c.Tool) == nil && ps.p.Broken[c.Tool] {
		good = false // the tool's own error is reported
	} else if set && ps.p.Tool(c.Tool) == nil {
		names := make([]string, 0, len(ps.p.Tools))
		for _, t := range ps.p.Tools {
			names = append(names, t.Name)
		}
		good = ps.errorf(v.Node, "case %q calls tool %q, which the document does not define%s", c.Name, c.Tool, yamlx.DidYouMean(c.Tool, names))
	}
	if list, nodes, _ := ps.c.Later(o, "exchanges"); list != nil {
		for j, x := range list.([]any) {
			e, ok := ps.parseExchange(x, nodes.Content[j])
			good = good && ok
			c.Exchanges = append(c.Exchanges, e)
		}
	} else if nodes != nil {
		good = false
	}
	if v, en, ok := ps.c.Later(o, "expect"); en != nil {
		good = ps.parseExpect(v, en, &c.Expect) && ok && good
	}
	if !good {
		return nil
	}
	return c
}

// fieldsOK reports whether every key of o that was written decoded and
// every required key is there (an unknown key, reported, spoils nothing
// else).
func fieldsOK(o *yamlx.Obj) bool {
	for _, f := range o.Decl.Fields {
		if o.NodeOf(f.Name) != nil && !o.Has(f.Name) || f.Required && o.NodeOf(f.Name) == nil {
			return false
		}
	}
	return true
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// jsonMap is a mapping read as JSON data, integers beyond int64 kept exact.
type jsonMap struct{}

func (jsonMap) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	if n.Kind != yaml.MappingNode {
		c.Errorf(n, "%s must be a mapping, not %s", what, yamlx.Describe(n))
		return nil, false
	}
	v, ok := c.Doc.Value(n, c.L)
	if !ok {
		return nil, false
	}
	return exactNumbers(n, v), true
}
func (jsonMap) Schema(*yamlx.Gen) map[string]any { return map[string]any{"type": "object"} }
func (jsonMap) Name() string                     { return "mapping" }

// secretsType is a test file's secrets: the secrets file's shape, each
// value long enough to be redacted.
type secretsType struct{}

func (secretsType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	good := true
	s, ok := proxy.DecodeSecrets(c, n, what, func(f yamlx.Pair, ss *proxy.ServiceSecrets) {
		if ss == nil {
			return
		}
		ss.Headers = canonicalHeaders(ss.Headers)
		if ss.Cookies == nil {
			ss.Cookies = map[string]string{}
		}
		for _, vals := range []map[string]string{ss.Cookies, ss.Headers} {
			for name, v := range vals {
				if len(v) < 4 || strings.TrimSpace(v) != v {
					good = false
					c.Errorf(f.Value, "the value of %s of service %q must have at least 4 characters and no surrounding spaces (short values cannot be redacted)", name, f.Key)
				}
			}
		}
	})
	return s, ok && good
}
func (secretsType) Schema(g *yamlx.Gen) map[string]any {
	return map[string]any{"type": "object", "additionalProperties": g.Object(proxy.SecretsDecl)}
}
func (secretsType) Name() string { return "secrets" }

func canonicalHeaders(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[http.CanonicalHeaderKey(k)] = v
	}
	return out
}

// nowType is an RFC 3339 time (unquoted, YAML reads it as a timestamp: its
// text is taken as written).
type nowType struct{}

func (nowType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	s := n.Value
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!timestamp" && n.Tag != "!!str") {
		s = yamlx.Describe(n)
	}
	at, err := time.Parse(time.RFC3339, s)
	switch {
	case err != nil:
		c.Errorf(n, "%s %q is not an RFC 3339 time such as 2026-04-27T12:00:00+08:00", what, s)
	case at.UTC().Year() < 1 || at.UTC().Year() > 9999:
		c.Errorf(n, "%s %q is outside the years 0001 to 9999", what, s)
	default:
		return &at, true
	}
	return nil, false
}
func (nowType) Schema(*yamlx.Gen) map[string]any {
	return map[string]any{"type": "string", "format": "date-time"}
}
func (nowType) Name() string { return "RFC 3339 time" }

// refusalType is a refusal reason, with a "did you mean".
type refusalType struct{}

func (refusalType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	s, ok := c.Doc.String(n, what, c.L)
	if !ok || slices.Contains(refusals, s) {
		return s, ok
	}
	tail := cmp.Or(yamlx.DidYouMean(s, refusals), " ("+strings.Join(refusals, ", ")+")")
	c.Errorf(n, "refused %q is not a refusal reason%s", s, tail)
	return nil, false
}
func (refusalType) Schema(*yamlx.Gen) map[string]any {
	return yamlx.Enum{Values: refusals}.Schema(nil)
}
func (refusalType) Name() string { return "refusal reason" }

// mergeSecrets returns base with over's services replacing base's.
func mergeSecrets(base, over proxy.Secrets) proxy.Secrets {
	if len(base) == 0 {
		return over
	}
	out := maps.Clone(base)
	maps.Copy(out, over)
	return out
}

func (ps *parser) parseExchange(x any, n *yaml.Node) (*Exchange, bool) {
	e := &Exchange{Pos: ps.c.Doc.NodePos(n), Resp: Response{Header: http.Header{}}}
	o, _ := x.(*yamlx.Obj)
	if o == nil || !o.Has("request") || !o.Has("response") {
		return e, false
	}
	e.Repeat = o.Bool("repeat")
	rq, rn, ok := ps.c.Later(o, "request")
	if ro, _ := rq.(*yamlx.Obj); ro == nil || !ps.parseRequest(ro, rn, e) || !ok {
		return e, false
	}
	rs, sn, ok := ps.c.Later(o, "response")
	ro, _ := rs.(*yamlx.Obj)
	return e, ro != nil && ps.parseResponse(ro, sn, &e.Resp) && ok
}

func (ps *parser) parseRequest(o *yamlx.Obj, n *yaml.Node, e *Exchange) bool {
	p := ps.p
	e.Method, e.Path = o.String("method"), o.String("path")
	good := true
	switch sv, hasService := o.Get("service"); {
	case hasService && o.Has("origin"):
		good = ps.errorf(n, "a request has service (a campus service) or origin (a web origin), not both")
	case hasService:
		e.Service = sv.Value.(string)
		if _, declared := p.Access.Service(e.Service); !declared {
			good = ps.errorf(sv.Node, "service %q is not in the document's access.campus", e.Service)
		}
	case o.Has("origin"):
		good = ps.parseOrigin(o.NodeOf("origin"), e)
	case len(p.Access.Campus) == 1:
		e.Service = p.Access.Campus[0].Service
	case len(p.Access.Campus) == 0 && len(p.Access.Web) == 1:
		e.Origin = p.Access.Web[0].String()
	default:
		good = ps.errorf(n, "request needs service or origin: the document declares %s and %s",
			plural(len(p.Access.Campus), "campus service"), plural(len(p.Access.Web), "web origin"))
	}
	if v, set := o.Get("path"); set && (!strings.HasPrefix(e.Path, "/") || strings.ContainsAny(e.Path, "?#")) {
		good = ps.errorf(v.Node, "path %q must start with / and hold no ? or # (the query goes in query)", e.Path)
	}
	e.Query, e.Form = values(o, "query"), values(o, "form")
	if v, set := o.Get("json"); set {
		e.JSON, e.HasJSON = normalize(exactNumbers(v.Node, v.Value)), true
	}
	if v, set := o.Get("session"); set {
		b := v.Value.(bool)
		e.Session = &b
		if b && e.Origin != "" {
			good = ps.errorf(v.Node, "a web request carries no session: session: true goes with a campus service")
		}
	}
	return good
}

// values is a query or form mapping as url.Values (nil: absent), a
// repeated parameter's values in their order.
func values(o *yamlx.Obj, key string) url.Values {
	entries, ok := o.Value(key).([]yamlx.Entry)
	if !ok {
		return nil
	}
	out := url.Values{}
	for _, e := range entries {
		vs, _ := e.Value.([]string)
		out[e.Key] = append(out[e.Key], vs...)
	}
	return out
}

// parseOrigin reads a request's web origin: one the document declares in
// access.web, compared normalised (https://News.Example.edu.cn:443 is
// https://news.example.edu.cn).
func (ps *parser) parseOrigin(n *yaml.Node, e *Exchange) bool {
	o, err := manifest.ParseOrigin(n.Value)
	if err != nil {
		return ps.errorf(n, "origin %q: %v", n.Value, err)
	}
	var declared []string
	for _, w := range ps.p.Access.Web {
		if w.Scheme == o.Scheme && w.Host == o.Host && w.Port == o.Port {
			e.Origin = w.String()
			return true
		}
		declared = append(declared, w.String())
	}
	return ps.errorf(n, "origin %q is not in the document's access.web%s", n.Value, yamlx.DidYouMean(o.String(), declared))
}

func (ps *parser) parseResponse(o *yamlx.Obj, n *yaml.Node, r *Response) bool {
	r.Status = int(o.Int("status"))
	for k, v := range o.StringMap("headers") {
		r.Header.Set(k, v)
	}
	jv, hasJSON := o.Get("json")
	bv, hasBody := o.Get("body")
	switch {
	case hasJSON && hasBody:
		return ps.errorf(n, "a response has json or body, not both")
	case hasJSON:
		b, err := marshal(exactNumbers(jv.Node, jv.Value))
		if err != nil {
			return ps.errorf(jv.Node, "json: %v", err)
		}
		r.Body = b
		if r.Header.Get("Content-Type") == "" {
			r.Header.Set("Content-Type", "application/json;charset=UTF-8")
		}
	case hasBody:
		s := bv.Value.(string)
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
		return ps.errorf(n, "the response body is more than %d bytes", MaxBodyBytes)
	}
	if v, set := o.Get("charset"); set {
		cs := v.Value.(string)
		enc, err := encodeCharset(r.Body, cs)
		if err != nil {
			return ps.errorf(v.Node, "charset %q: %v", cs, err)
		}
		r.Body = enc
		if ct := r.Header.Get("Content-Type"); ct != "" && !strings.Contains(strings.ToLower(ct), "charset="+strings.ToLower(cs)) {
			base, _, _ := strings.Cut(ct, ";")
			r.Header.Set("Content-Type", base+"; charset="+cs)
		}
	}
	return true
}

func (ps *parser) parseExpect(v any, n *yaml.Node, e *Expect) bool {
	o, _ := v.(*yamlx.Obj)
	if o == nil {
		return false
	}
	if len(n.Content) == 0 {
		return ps.errorf(n, "expect needs output, jq, error, status, refused or kv")
	}
	good := fieldsOK(o) // a written key that did not decode spoils the case
	if x, set := o.Get("output"); set {
		e.Output, e.HasOutput = normalize(exactNumbers(x.Node, x.Value)), true
	}
	e.Status, e.Error, e.Refused = o.String("status"), o.String("error"), o.String("refused")
	if x, set := o.Get("error"); set && x.Node.Kind == yaml.ScalarNode && x.Node.Value == "" && x.Node.Tag == "!!str" {
		good = ps.errorf(x.Node, "error must be a part of the expected message, not empty")
	}
	if x, set := o.Get("kv"); set {
		e.KV = x.Value.(map[string]any)
		if len(e.KV) == 0 {
			good = ps.errorf(x.Node, "expect.kv lists no key: it would assert nothing")
		}
		for k, v := range e.KV {
			e.KV[k] = normalize(v)
		}
	}
	as, _ := o.Value("jq").([]any)
	for _, a := range as {
		e.JQ = append(e.JQ, a.(Assertion))
	}
	outcomes := 0
	written := func(k string) bool { return o.NodeOf(k) != nil }
	for _, b := range []bool{written("output") || written("status") || written("jq"), written("error"), written("refused")} {
		if b {
			outcomes++
		}
	}
	if outcomes > 1 {
		good = ps.errorf(n, "expect holds a result (output, jq, status), an error or a refusal: only one of them")
	}
	return good
}

// assertionType is a jq assertion of expect.jq: a jq condition, or
// {expr, equals}. It decodes to an Assertion, its program compiled and
// hardened as a step's programs are.
type assertionType struct{ yamlx.Either }

func (assertionType) Decode(c *yamlx.Ctx, n *yaml.Node, _ string) (any, bool) {
	a := Assertion{Pos: c.Doc.NodePos(n)}
	src := n
	if n.Kind == yaml.MappingNode {
		o, ok := c.Object(n, assertionDecl)
		if !ok {
			return nil, false
		}
		src = o.NodeOf("expr")
		if v, set := o.Get("equals"); set {
			a.Equals, a.HasEquals = normalize(exactNumbers(v.Node, v.Value)), true
		}
	}
	s, ok := c.Doc.String(src, "a jq assertion", c.L)
	if !ok {
		return nil, false
	}
	a.Src = s
	lim := steps.DefaultLimits()
	if a.Code = steps.CompileStandalone(s, &lim, c.Doc.NodePos(src), c.L); a.Code == nil {
		return nil, false
	}
	return a, true
}

// sortedKeys lists a map's keys sorted.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
