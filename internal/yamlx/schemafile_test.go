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
