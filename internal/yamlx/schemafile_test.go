package yamlx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncodeSchemaOrderAndLines(t *testing.T) {
	g := NewGen()
	root := g.Object(requestDecl)
	doc := SchemaFile("https://x/r.json", "R", "a request", root, g)
	b, err := EncodeSchema(doc)
	require.NoError(t, err)
	s := string(b)
	// Keywords in a reader's order, then the properties sorted by name.
	assert.Regexp(t, `(?s)^\{\n  "\$schema": .*\n  "\$id": .*\n  "title": "R",\n  "description": "a request"`, s)
	assert.Less(t, indexOf(s, `"contentType"`), indexOf(s, `"method"`))
	assert.Contains(t, s, `"method": {"description": "HTTP method", "default": "GET", "enum": ["GET", "POST"]}`, "short objects on one line")
	b2, err := EncodeSchema(doc)
	require.NoError(t, err)
	assert.Equal(t, b, b2, "the same value gives the same bytes")
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestCheckFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.json")
	err := CheckFile(p, []byte("x\n"), false, "run the update")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run the update")
	require.NoError(t, CheckFile(p, []byte("x\n"), true, ""))
	require.NoError(t, CheckFile(p, []byte("x\n"), false, ""))
	require.NoError(t, os.WriteFile(p, []byte("y\n"), 0o644))
	err = CheckFile(p, []byte("x\n"), false, "run the update")
	assert.EqualError(t, err, p+" is out of date: run the update")
}

func TestObjCollections(t *testing.T) {
	d := &Decl{Name: "x", Fields: []Field{
		{Name: "list", Type: List{Of: String{}}},
		{Name: "map", Type: MapOf{Of: String{}}},
		{Name: "sub", Type: Object{retryDecl}},
	}}
	o, ok, l := decode(t, "list: [a, b]\nmap: {k: v, j: w}\nsub: {attempts: 3}\n", d)
	require.True(t, ok, l.Error())
	assert.Equal(t, []string{"a", "b"}, o.Strings("list"))
	assert.Equal(t, map[string]string{"k": "v", "j": "w"}, o.StringMap("map"))
	assert.Equal(t, int64(3), o.Obj("sub").Int("attempts"))
	o, ok, _ = decode(t, "{}\n", d)
	require.True(t, ok)
	assert.Nil(t, o.Strings("list"))
	assert.Nil(t, o.StringMap("map"))
	assert.Nil(t, o.Obj("sub"))
}

func TestIntHintAndScalar(t *testing.T) {
	d := &Decl{Name: "r", Fields: []Field{
		{Name: "status", Type: Int{Min: 100, Max: 599, Hint: "an HTTP status"}},
		{Name: "q", Type: MapOf{Of: Scalar{}}},
	}}
	o, ok, l := decode(t, "status: 302\nq: {a: 1, b: true, c: x}\n", d)
	require.True(t, ok, l.Error())
	assert.Equal(t, int64(302), o.Int("status"))
	assert.Equal(t, map[string]string{"a": "1", "b": "true", "c": "x"}, o.StringMap("q"))
	_, ok, l = decode(t, "status: 99\nq: {a: [1], b: null}\n", d)
	require.False(t, ok)
	assert.Equal(t, "f.yaml:1:9: status 99 is not an HTTP status\n"+
		"f.yaml:2:8: q value \"a\" must be a string, number or boolean, not a list\n"+
		"f.yaml:2:16: q value \"b\" must be a string, number or boolean, not null", l.Error())
	g := NewGen()
	s := g.Object(d)["properties"].(map[string]any)
	assert.Equal(t, map[string]any{"type": "integer", "minimum": int64(100), "maximum": int64(599)}, s["status"])
	assert.Equal(t, []any{"string", "number", "boolean"}, s["q"].(map[string]any)["additionalProperties"].(map[string]any)["type"])
}

func TestCtxLaterKeepsGoodParts(t *testing.T) {
	d := &Decl{Name: "a step", Fields: []Field{
		{Name: "as", Type: String{}},
		{Name: "list", Type: Later{Of: List{Of: Object{retryDecl}}}},
	}}
	doc, l := parse(t, "list:\n  - {attempts: 2}\n  - {attempts: 9}\n  - {as: x, attempts: 3}\n")
	c := NewCtx(doc, &l, nil)
	o, ok := c.Object(doc.Root, d)
	require.True(t, ok, l.Error())
	v, n, ok := c.Later(o, "list")
	require.False(t, ok)
	require.Equal(t, 2, n.Line)
	items := v.([]any)
	require.Len(t, items, 3)
	assert.Equal(t, int64(2), items[0].(*Obj).Int("attempts"))
	assert.Equal(t, int64(3), items[2].(*Obj).Int("attempts"), "the good keys of a bad item")
	assert.Equal(t, "f.yaml:3:16: attempts must be between 1 and 5\n"+
		"f.yaml:4:6: unknown key \"as\" in retry (as is a key of a step, not of retry)", l.Error())
	v, n, ok = c.Later(o, "as")
	assert.True(t, ok)
	assert.Nil(t, v)
	assert.Nil(t, n)
}

func TestFieldNeedAndDeclSchema(t *testing.T) {
	d := &Decl{Name: "a response", Schema: map[string]any{"not": map[string]any{"required": []any{"json", "body"}}}, Fields: []Field{
		{Name: "status", Type: Int{}, Required: true, Need: "an HTTP status"},
		{Name: "json", Type: Any{}},
		{Name: "body", Type: String{}},
	}}
	_, ok, l := decode(t, "json: 1\n", d)
	require.False(t, ok)
	assert.Equal(t, `f.yaml:1:1: a response needs "status": an HTTP status`, l.Error())
	s := NewGen().Object(d)
	assert.Equal(t, map[string]any{"required": []any{"json", "body"}}, s["not"])
}

func TestBetweenAndTables(t *testing.T) {
	doc := "a\n<!-- x:begin -->\nold\n<!-- x:end -->\nb\n"
	got, ok := Between(doc, "x", "new\n")
	require.True(t, ok)
	assert.Equal(t, "a\n<!-- x:begin -->\nnew\n<!-- x:end -->\nb\n", got)
	_, ok = Between(doc, "y", "new\n")
	assert.False(t, ok)
	s := Tables(retryDecl, requestDecl)
	assert.Contains(t, s, "*retry*\n\n| key | type | default | |\n")
	assert.Contains(t, s, "\n*request*\n\n| key |")
	assert.Contains(t, s, "| `attempts` | integer 1 to 5 | 2 | attempts in all |")
	assert.Equal(t, retryDecl.Table(), Tables(retryDecl))
}
