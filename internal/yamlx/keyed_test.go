package yamlx

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

var prefDecl = &Decl{Name: "a preference", Fields: []Field{
	{Name: "title", Type: String{}, Required: true},
	{Name: "label", Type: Short{Decl: labelDecl, Key: "text", Hint: "write {text: …}"}},
}}

var labelDecl = &Decl{Name: "a label", Fields: []Field{{Name: "text", Type: String{}}, {Name: "size", Type: Int{}, Default: int64(3)}}}

var prefsDecl = &Decl{Name: "doc", Fields: []Field{
	{Name: "prefs", Type: Keyed{Of: prefDecl, By: "name", Key: String{Pattern: regexp.MustCompile(`^[a-z]+$`), Hint: "a name"}, Max: 3}},
}}

// TestKeyedBothForms: the mapping keyed by name and the old list of
// {name, …} decode to the same entries; the list gives one warning that
// names the new form.
func TestKeyedBothForms(t *testing.T) {
	o, ok, l := decode(t, "prefs:\n  a: {title: A}\n  b: {title: B}\n", prefsDecl)
	require.True(t, ok, l.Error())
	assert.Empty(t, l.Items)
	es := o.Value("prefs").([]Entry)
	require.Len(t, es, 2)
	assert.Equal(t, "a", es[0].Key)
	assert.Equal(t, 2, es[0].KeyN.Line)
	assert.Equal(t, "B", es[1].Value.(*Obj).String("title"))

	o, ok, l = decode(t, "prefs:\n  - {name: a, title: A}\n  - {name: b, title: B}\n", prefsDecl)
	require.True(t, ok, l.Error())
	require.Len(t, l.Items, 1)
	assert.Equal(t, "f.yaml:2:3: warning: prefs as a list of {name, …} is the old spelling: write a mapping keyed by name (name: {…})", l.Items[0].String())
	es = o.Value("prefs").([]Entry)
	require.Len(t, es, 2)
	assert.Equal(t, "b", es[1].Key)
	assert.Equal(t, 3, es[1].KeyN.Line)
}

func TestKeyedProblems(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"bad name":      {"prefs:\n  A: {title: A}\n", `f.yaml:2:3: prefs name: "A" is not a name`},
		"list twice":    {"prefs:\n  - {name: a, title: A}\n  - {name: a, title: B}\n", `f.yaml:3:12: name "a" is used twice`},
		"list unnamed":  {"prefs:\n  - {title: A}\n", `f.yaml:2:5: a preference needs "name"`},
		"scalar":        {"prefs: x\n", `f.yaml:1:8: prefs must be a mapping of name to a preference, not a string`},
		"too many":      {"prefs: {a: {title: A}, b: {title: B}, c: {title: C}, d: {title: D}}\n", `f.yaml:1:8: prefs holds more than 3 keys`},
		"missing title": {"prefs:\n  a: {label: x}\n", `f.yaml:2:6: a preference needs "title"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, ok, l := decode(t, tc.src, prefsDecl)
			assert.False(t, ok)
			assert.Contains(t, l.Error(), tc.want)
		})
	}
}

// TestShortScalar: a scalar stands for the mapping's one key, with a
// warning naming the mapping form; the mapping form gives none.
func TestShortScalar(t *testing.T) {
	o, ok, l := decode(t, "prefs:\n  a: {title: A, label: big}\n", prefsDecl)
	require.True(t, ok, l.Error())
	require.Len(t, l.Items, 1)
	assert.Equal(t, `f.yaml:2:24: warning: label: "big" is the old shorthand of a label: write {text: …}`, l.Items[0].String())
	lb := o.Value("prefs").([]Entry)[0].Value.(*Obj).Obj("label")
	assert.Equal(t, "big", lb.String("text"))
	assert.Equal(t, int64(3), lb.Int("size"), "the mapping's defaults")

	o, ok, l = decode(t, "prefs:\n  a: {title: A, label: {text: big, size: 1}}\n", prefsDecl)
	require.True(t, ok, l.Error())
	assert.Empty(t, l.Items)
	assert.Equal(t, int64(1), o.Value("prefs").([]Entry)[0].Value.(*Obj).Obj("label").Int("size"))

	_, ok, l = decode(t, "prefs:\n  a: {title: A, label: 7}\n", prefsDecl)
	assert.False(t, ok)
	assert.Contains(t, l.Error(), "label must be a string, not a number")
}

// TestKeyedSchema: the schema takes both forms, marks the old deprecated,
// and refuses what the decoder refuses.
func TestKeyedSchema(t *testing.T) {
	g := NewGen()
	s := g.Object(prefsDecl)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("s.json", roundTrip(t, s)))
	sch, err := c.Compile("s.json")
	require.NoError(t, err)
	for src, valid := range map[string]bool{
		"prefs: {a: {title: A, label: x}}\n":                                    true,
		"prefs: {a: {title: A, label: {text: x}}}\n":                            true,
		"prefs: [{name: a, title: A}]\n":                                        true,
		"prefs: {A: {title: A}}\n":                                              false,
		"prefs: [{title: A}]\n":                                                 false,
		"prefs: {a: {title: A, label: {txt: x}}}\n":                             false,
		"prefs: {a: {}, b: {title: B}}\n":                                       false,
		"prefs: {a: {title: A}, b: {title: A}, c: {title: A}, d: {title: A}}\n": false,
	} {
		if valid {
			assert.NoError(t, sch.Validate(yamlJSON(t, src)), src)
		} else {
			assert.Error(t, sch.Validate(yamlJSON(t, src)), src)
		}
	}
	assert.Equal(t, "map of name to {title, label}", prefsDecl.Fields[0].Type.Name())
}

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func yamlJSON(t *testing.T, src string) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal([]byte(src), &v))
	return roundTrip(t, v)
}
