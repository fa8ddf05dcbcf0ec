package yamlx

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

var retryDecl = &Decl{Name: "retry", Fields: []Field{
	{Name: "attempts", Type: Int{Min: 1, Max: 5}, Default: int64(2), Doc: "attempts in all"},
	{Name: "backoff", Type: Duration{Max: 10 * time.Second}, Default: 500 * time.Millisecond, Doc: "first wait"},
}}

var requestDecl = &Decl{Name: "request", Fields: []Field{
	{Name: "url", Type: String{MaxLen: 20}, Required: true, Doc: "where"},
	{Name: "method", Type: Enum{Values: []string{"GET", "POST"}, Fold: true}, Default: "GET", Doc: "HTTP method"},
	{Name: "query", Type: MapOf{Of: String{}}, Doc: "query parameters"},
	{Name: "contentType", Type: String{}, Default: "text/plain", Deprecated: []string{"content_type"}, Doc: "media type"},
	{Name: "retry", Type: Object{retryDecl}, Doc: "retries"},
}}

var stepDecl = &Decl{Name: "a step", Fields: []Field{
	{Name: "request", Type: Object{requestDecl}},
	{Name: "as", Type: String{Pattern: regexp.MustCompile(`^[a-z]+$`), Hint: "a variable name"}},
}}

func decode(t *testing.T, src string, d *Decl) (*Obj, bool, diag.List) {
	t.Helper()
	doc, l := parse(t, src)
	require.False(t, l.HasErrors(), l.Error())
	o, ok := doc.Decode(doc.Root, d, &l)
	return o, ok, l
}

func TestDecodeValuesAndDefaults(t *testing.T) {
	o, ok, l := decode(t, "request:\n  url: /x\n  method: post\n  query: {a: b}\n  retry: {attempts: 3}\nas: res\n", stepDecl)
	require.True(t, ok, l.Error())
	assert.Equal(t, "res", o.String("as"))
	r := o.Value("request").(*Obj)
	assert.Equal(t, "POST", r.String("method"), "folded to the declared spelling")
	assert.Equal(t, "text/plain", r.String("contentType"), "the default")
	assert.False(t, r.Has("contentType"))
	assert.True(t, r.Has("url"))
	q := r.Value("query").([]Entry)
	require.Len(t, q, 1)
	assert.Equal(t, "a", q[0].Key)
	assert.Equal(t, 4, doc0Line(q[0].KeyN))
	rt := r.Value("retry").(*Obj)
	assert.Equal(t, int64(3), rt.Int("attempts"))
	assert.Equal(t, 500*time.Millisecond, rt.Value("backoff"))
}

func doc0Line(n *yaml.Node) int { return n.Line }

func TestDecodeProblems(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"did you mean":      {"request:\n  url: /x\n  mehtod: GET\n", `f.yaml:3:3: unknown key "mehtod" in request (did you mean "method"?)`},
		"no suggestion":     {"request:\n  url: /x\n  weird: 1\n", `f.yaml:3:3: unknown key "weird" in request`},
		"key of the parent": {"request:\n  url: /x\n  as: res\n", `f.yaml:3:3: unknown key "as" in request (as is a key of a step, not of request)`},
		"belongs under":     {"request:\n  url: /x\nquery: {a: b}\n", `f.yaml:3:1: unknown key "query" in a step (query belongs under request)`},
		"grandparent":       {"request:\n  url: /x\n  retry: {as: x}\n", `f.yaml:3:11: unknown key "as" in retry (as is a key of a step, not of retry)`},
		"wrong type":        {"request:\n  url: [x]\n", `f.yaml:2:8: url must be a string, not a list`},
		"bare number":       {"request:\n  url: 12\n", `f.yaml:2:8: url must be a string, not a number (quote it)`},
		"too long":          {"request:\n  url: /aaaaaaaaaaaaaaaaaaaaaaaaa\n", `f.yaml:2:8: url is longer than 20 characters`},
		"enum":              {"request:\n  url: /x\n  method: FETCH\n", `f.yaml:3:11: method "FETCH" must be one of GET, POST`},
		"bounds":            {"request:\n  url: /x\n  retry: {attempts: 9}\n", `f.yaml:3:21: attempts must be between 1 and 5`},
		"duration":          {"request:\n  url: /x\n  retry: {backoff: soon}\n", `f.yaml:3:20: backoff: "soon" is not a duration such as 500ms or 10s`},
		"duration max":      {"request:\n  url: /x\n  retry: {backoff: 1m}\n", `f.yaml:3:20: backoff must be at most 10s`},
		"required":          {"request:\n  method: GET\n", `f.yaml:2:3: request needs "url"`},
		"pattern":           {"request: {url: /x}\nas: A1\n", `f.yaml:2:5: as: "A1" is not a variable name`},
		"not a mapping":     {"request: [1]\n", `f.yaml:1:10: request must be a mapping, not a list`},
		"both spellings":    {"request:\n  url: /x\n  contentType: a\n  content_type: b\n", `f.yaml:4:3: request has both contentType and its old spelling content_type`},
	} {
		t.Run(name, func(t *testing.T) {
			_, ok, l := decode(t, tc.src, stepDecl)
			assert.False(t, ok)
			assert.Contains(t, l.Error(), tc.want)
		})
	}
}

func TestDecodeDeprecatedSpelling(t *testing.T) {
	o, ok, l := decode(t, "request:\n  url: /x\n  content_type: text/html\n", stepDecl)
	require.True(t, ok, l.Error())
	assert.False(t, l.HasErrors())
	require.Len(t, l.Items, 1)
	assert.Equal(t, "f.yaml:3:3: warning: request.content_type is the old spelling of contentType: write contentType", l.Items[0].String())
	assert.Equal(t, "text/html", o.Value("request").(*Obj).String("contentType"))
}

// A bad value is reported once: not also as missing, and no default stands
// in for it.
func TestDecodeBadValueIsNotMissing(t *testing.T) {
	r, ok, l := decode(t, "url: [x]\nmethod: 1\n", requestDecl)
	assert.False(t, ok)
	assert.Len(t, l.Items, 2, l.Error())
	assert.Nil(t, r.Value("method"))
	assert.False(t, r.Has("url"))
}

func TestRestKeys(t *testing.T) {
	d := &Decl{Name: "status", Fields: []Field{{Name: "status", Type: String{}, Required: true}}, Rest: Any{}}
	o, ok, l := decode(t, "status: x\nmethods: [sms]\nn: 1\n", d)
	require.True(t, ok, l.Error())
	require.Len(t, o.Rest, 2)
	assert.Equal(t, "methods", o.Rest[0].Key)
	assert.Equal(t, []any{"sms"}, o.Rest[0].Value)
}

func TestSchemaFromDecl(t *testing.T) {
	g := NewGen()
	d := *stepDecl
	d.Title, d.Doc = "A step", "One step."
	s := g.Object(&d)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(b, &doc))
	req := doc.(map[string]any)["properties"].(map[string]any)["request"].(map[string]any)
	method := req["properties"].(map[string]any)["method"].(map[string]any)
	assert.Equal(t, map[string]any{"enum": []any{"GET", "POST"}, "default": "GET", "description": "HTTP method"}, method)
	assert.Equal(t, true, req["properties"].(map[string]any)["content_type"].(map[string]any)["deprecated"])
	backoff := req["properties"].(map[string]any)["retry"].(map[string]any)["properties"].(map[string]any)["backoff"].(map[string]any)
	assert.Equal(t, "500ms", backoff["default"])
	assert.Equal(t, "A step", doc.(map[string]any)["title"])

	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("s.json", doc))
	sch, err := c.Compile("s.json")
	require.NoError(t, err)
	for src, valid := range map[string]bool{
		"request: {url: /x, method: GET, retry: {attempts: 5, backoff: 1s}}\nas: res\n": true,
		"request: {url: /x, mehtod: GET}\n":                                             false,
		"request: {url: /x, retry: {attempts: 9}}\n":                                    false,
		"request: {method: GET}\n":                                                      false,
		"request: {url: /x}\nas: A1\n":                                                  false,
	} {
		var v any
		require.NoError(t, yaml.Unmarshal([]byte(src), &v))
		j, _ := json.Marshal(v)
		var jv any
		require.NoError(t, json.Unmarshal(j, &jv))
		if valid {
			assert.NoError(t, sch.Validate(jv), src)
		} else {
			assert.Error(t, sch.Validate(jv), src)
		}
	}
}

func TestSchemaDefsAndRecursion(t *testing.T) {
	node := &Decl{Name: "node", Def: "node"}
	node.Fields = []Field{{Name: "kids", Type: List{Of: Object{node}}, Doc: "children"}}
	g := NewGen()
	assert.Equal(t, Ref("node"), g.Object(node))
	kids := g.Defs["node"].(map[string]any)["properties"].(map[string]any)["kids"].(map[string]any)
	assert.Equal(t, Ref("node"), kids["items"])
}

func TestTable(t *testing.T) {
	assert.Equal(t, "| key | type | default | |\n|---|---|---|---|\n"+
		"| `attempts` | integer 1 to 5 | 2 | attempts in all |\n"+
		"| `backoff` | duration | 500ms | first wait |\n", retryDecl.Table())
	assert.Contains(t, requestDecl.Table(), "| `method` | GET\\|POST | GET | HTTP method |")
	assert.Contains(t, requestDecl.Table(), "| `url` | string | required | where |")
	assert.Contains(t, requestDecl.Table(), "(old spelling: content_type)")
}

func TestDecodeCountsUnknownKeys(t *testing.T) {
	o, ok, _ := decode(t, "servce: a\nurl: /x\nquery: {}\nfoo: 1\n", requestDecl)
	assert.False(t, ok)
	assert.Equal(t, 2, o.Unknown)
	o, ok, _ = decode(t, "url: /x\n", requestDecl)
	assert.True(t, ok)
	assert.Zero(t, o.Unknown)
}

// An alias in another unit is read, converted and warned about; a Keyed
// value's old list may declare its own rules (Old).
func TestAliasAndKeyedOld(t *testing.T) {
	ttl := Field{Name: "ttlMs", Type: Int{Min: 1000, Max: 9000}, Required: true, Aliases: []Alias{{Name: "ttl", Type: Int{Min: 1, Max: 9},
		To: func(v any) any { return v.(int64) * 1000 }, Doc: "in seconds"}}}
	item := &Decl{Name: "a source", Fields: []Field{ttl}}
	optional := ttl
	optional.Required, optional.Default = false, int64(5000)
	old := &Decl{Name: "a source", Fields: []Field{{Name: "name", Type: String{}, Required: true}, optional}}
	root := &Decl{Name: "root", Fields: []Field{{Name: "sources", Type: Keyed{Of: item, By: "name", Key: String{}, Old: old}}}}
	o, ok, l := decode(t, "sources:\n  - {name: a, ttl: 3}\n  - {name: b}\n", root)
	require.True(t, ok, l.Error())
	require.Len(t, l.Items, 2, l.Error())
	assert.Contains(t, l.Items[0].String(), "f.yaml:2:3: warning: sources as a list of {name, …} is the old spelling")
	assert.Equal(t, "f.yaml:2:15: warning: a source.ttl is the old spelling of ttlMs (ttl is in seconds): write ttlMs", l.Items[1].String())
	es := o.Value("sources").([]Entry)
	assert.Equal(t, int64(3000), es[0].Value.(*Obj).Int("ttlMs"))
	assert.Equal(t, int64(5000), es[1].Value.(*Obj).Int("ttlMs"), "the old list's default")

	o, ok, l = decode(t, "sources:\n  a: {ttl: 2}\n", root)
	require.True(t, ok, l.Error())
	assert.Equal(t, int64(2000), o.Value("sources").([]Entry)[0].Value.(*Obj).Int("ttlMs"), "the alias stands for the required key")
	_, ok, l = decode(t, "sources:\n  a: {}\n", root)
	assert.False(t, ok)
	assert.Contains(t, l.Error(), `a source needs "ttlMs"`)
	_, ok, l = decode(t, "sources:\n  a: {ttl: 30}\n", root)
	assert.False(t, ok)
	assert.Contains(t, l.Error(), "f.yaml:2:12: ttl must be between 1 and 9")
	_, ok, l = decode(t, "sources:\n  a: {ttl: 3, ttlMs: 3000}\n", root)
	assert.False(t, ok)
	assert.Contains(t, l.Error(), "has both ttlMs and its old spelling ttl")

	assert.Contains(t, item.Table(), "(old spelling: ttl, in seconds)")
	g := NewGen()
	assert.Equal(t, true, g.Object(item)["properties"].(map[string]any)["ttl"].(map[string]any)["deprecated"])
}

// Rule words the refusal of a String (too long or not matching) and of an
// Enum (with a "did you mean"); an Enum's Old spelling reads as the new one
// with a warning, and the schema still takes it.
func TestRuleAndOldSpelling(t *testing.T) {
	d := &Decl{Name: "a tool", Fields: []Field{
		{Name: "id", Type: String{Pattern: regexp.MustCompile(`^[a-z]+$`), MaxLen: 5, Rule: "must match [a-z]+ (at most 5 characters)"}},
		{Name: "mode", Type: Enum{Values: []string{"auto", "ask", "off"}, Rule: "must be auto, ask or off", Old: map[string]string{"never": "off"}}},
	}}
	for src, want := range map[string]string{
		"id: Abc\n":     `f.yaml:1:5: id "Abc" must match [a-z]+ (at most 5 characters)`,
		"id: abcdef\n":  `f.yaml:1:5: id "abcdef" must match [a-z]+ (at most 5 characters)`,
		"mode: akk\n":   `f.yaml:1:7: mode "akk" must be auto, ask or off (did you mean "ask"?)`,
		"mode: sleep\n": `f.yaml:1:7: mode "sleep" must be auto, ask or off`,
	} {
		_, ok, l := decode(t, src, d)
		assert.False(t, ok, src)
		assert.Equal(t, want, l.Error(), src)
	}
	o, ok, l := decode(t, "mode: never\n", d)
	require.True(t, ok, l.Error())
	assert.Equal(t, "off", o.String("mode"))
	assert.Equal(t, `f.yaml:1:7: warning: mode "never" is the old spelling of "off": write mode: off`, l.Error())
	assert.Equal(t, []any{"auto", "ask", "off", "never"}, d.Fields[1].Type.Schema(nil)["enum"])
}
