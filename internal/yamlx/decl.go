package yamlx

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/internal/diag"
	"go.yaml.in/yaml/v3"
)

// Type is the type of a declared value: it decodes itself from a positioned
// node and describes itself as JSON Schema and in the reference tables.
type Type interface {
	// Decode reads n; what names the value in messages ("request.method").
	// It reports every problem to c and returns false when there was one.
	Decode(c *Ctx, n *yaml.Node, what string) (any, bool)
	// Schema is the value's JSON Schema (a field adds its description and
	// default); g holds shared definitions.
	Schema(g *Gen) map[string]any
	// Name is the type as the reference tables show it ("string",
	// "integer 1 to 5", "GET|HEAD").
	Name() string
}

// Decl declares one mapping of a YAML surface (the front matter, a step
// kind's value, a test case): its keys, their types, docs and defaults.
// Everything about a key is said here once; the decoder, the reference
// tables and the JSON Schema read it.
type Decl struct {
	Name   string  // how messages name the mapping ("request", "the front matter")
	Title  string  // the schema's title (optional)
	Doc    string  // one line: the schema's description
	Fields []Field // the keys, in the order the reference lists them
	// Rest, when set, types every key the fields do not name (a mapping of
	// names to values with some reserved keys, e.g. status's extra keys).
	Rest Type
	// Def, when set, makes the schema a shared definition "#/$defs/DEF".
	Def string
	// Schema holds more JSON Schema keywords of the mapping, for rules
	// between keys that the owner checks in code ("not": {"required":
	// ["json", "body"]}).
	Schema map[string]any
}

// Field is one key of a declared mapping.
type Field struct {
	Name     string
	Type     Type
	Doc      string // one line: the reference and the schema's description
	Default  any    // the value when the key is absent (nil: none); shown in docs and the schema
	Required bool
	// Need, for a required key, says what it is in the message when it is
	// missing: `case "a" needs "expect": output, jq, error, ...`.
	Need string
	// Deprecated lists old spellings still read, each with a warning that
	// names Name.
	Deprecated []string
	// Aliases are old spellings whose value reads differently (another
	// unit): each decodes with its own type and turns into the field's value.
	Aliases []Alias
}

// Alias is an old spelling of a field whose value reads differently: it
// decodes with Type, and To turns its value into the field's.
type Alias struct {
	Name string
	Type Type
	To   func(any) any
	Doc  string // how it differs: "in seconds"
}

// alias is the Alias spelled name, or nil.
func (f *Field) alias(name string) *Alias {
	if i := slices.IndexFunc(f.Aliases, func(a Alias) bool { return a.Name == name }); i >= 0 {
		return &f.Aliases[i]
	}
	return nil
}

// Field returns the field named name (or spelled by a deprecated alias).
func (d *Decl) Field(name string) (*Field, bool) {
	for i := range d.Fields {
		f := &d.Fields[i]
		if f.Name == name || slices.Contains(f.Deprecated, name) || f.alias(name) != nil {
			return f, true
		}
	}
	return nil, false
}

// Keys lists the declared keys, in order.
func (d *Decl) Keys() []string {
	out := make([]string, len(d.Fields))
	for i, f := range d.Fields {
		out[i] = f.Name
	}
	return out
}

// Ctx carries one decoding: the text, the diagnostics, the caller's
// environment for its own types (a step compiler), and the declarations
// being decoded, from the outermost, for misplaced-key hints.
type Ctx struct {
	Doc   *Doc
	L     *diag.List
	Env   any
	stack []*Decl
}

// NewCtx starts a decoding of d's nodes.
func NewCtx(d *Doc, l *diag.List, env any) *Ctx { return &Ctx{Doc: d, L: l, Env: env} }

// Errorf reports a problem at a node.
func (c *Ctx) Errorf(n *yaml.Node, format string, args ...any) {
	c.L.Errorf(c.Doc.NodePos(n), format, args...)
}

// Val is one decoded key.
type Val struct {
	Value any
	Key   *yaml.Node // nil when the value is the default
	Node  *yaml.Node // the value's node (nil when defaulted)
}

// Obj is a decoded mapping: its fields' values (defaults filled in), the
// Rest keys in source order, and the nodes for positions.
type Obj struct {
	Decl *Decl
	Node *yaml.Node
	vals map[string]Val
	Rest []Entry
	// Unknown counts the keys reported as unknown: checks of how the keys
	// combine would only repeat the error ("needs both service and path"
	// after a misspelled service), so they may skip.
	Unknown int
}

// Entry is one key of a mapping decoded with a Rest type (or MapOf).
type Entry struct {
	Key   string
	KeyN  *yaml.Node
	Node  *yaml.Node
	Value any
}

// Has reports whether the key was written (and decoded).
func (o *Obj) Has(name string) bool {
	_, ok := o.Get(name)
	return ok
}

// Get returns a written key's value; ok is false when it is absent, even
// when it has a default.
func (o *Obj) Get(name string) (Val, bool) {
	if o == nil {
		return Val{}, false
	}
	v, ok := o.vals[name]
	if !ok || v.Key == nil {
		return Val{}, false
	}
	return v, true
}

// Value is a key's value, or its default, or nil.
func (o *Obj) Value(name string) any {
	if o == nil {
		return nil
	}
	return o.vals[name].Value
}

// Node is the node of a written key's value (nil when absent).
func (o *Obj) NodeOf(name string) *yaml.Node {
	if o == nil {
		return nil
	}
	return o.vals[name].Node
}

// String is a string key's value or default ("" when neither).
func (o *Obj) String(name string) string { s, _ := o.Value(name).(string); return s }

// Int is an integer key's value or default (0 when neither).
func (o *Obj) Int(name string) int64 {
	switch v := o.Value(name).(type) {
	case int64:
		return v
	case int:
		return int64(v)
	}
	return 0
}

// Bool is a boolean key's value or default.
func (o *Obj) Bool(name string) bool { b, _ := o.Value(name).(bool); return b }

// Decode walks mapping n against decl; see Ctx.Object.
func (d *Doc) Decode(n *yaml.Node, decl *Decl, l *diag.List) (*Obj, bool) {
	return NewCtx(d, l, nil).Object(n, decl)
}

// Object walks mapping n against decl: unknown keys (with a "did you mean"
// or, for a key some enclosing or inner declaration has, where it belongs),
// deprecated spellings (a warning naming the new one), each value with its
// type, and missing required keys, all reported at their positions. The
// result holds what decoded, with defaults; ok is false on any error.
func (c *Ctx) Object(n *yaml.Node, decl *Decl) (*Obj, bool) {
	if n == nil || n.Kind != yaml.MappingNode {
		c.Errorf(n, "%s must be a mapping, not %s", decl.Name, Describe(n))
		return nil, false
	}
	c.stack = append(c.stack, decl)
	defer func() { c.stack = c.stack[:len(c.stack)-1] }()
	o := &Obj{Decl: decl, Node: n, vals: make(map[string]Val, len(decl.Fields))}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := o.vals[k.Value]; dup {
			continue // reported by the structural check
		}
		f, known := decl.Field(k.Value)
		if !known {
			if decl.Rest != nil {
				x, good := decl.Rest.Decode(c, v, decl.Name+"."+k.Value)
				ok = ok && good
				o.Rest = append(o.Rest, Entry{Key: k.Value, KeyN: k, Node: v, Value: x})
				continue
			}
			c.Errorf(k, "%s", c.unknown(n, decl, k.Value))
			o.Unknown++
			ok = false
			continue
		}
		t, what, a := f.Type, f.Name, f.alias(k.Value)
		if f.Name != k.Value {
			how := ""
			if a != nil {
				t, what, how = a.Type, k.Value, " ("+k.Value+" is "+a.Doc+")"
			}
			c.L.Warnf(c.Doc.NodePos(k), "%s.%s is the old spelling of %s%s: write %s", decl.Name, k.Value, f.Name, how, f.Name)
			if _, both := o.vals[f.Name]; both || hasKey(n, f.Name) {
				c.Errorf(k, "%s has both %s and its old spelling %s", decl.Name, f.Name, k.Value)
				ok = false
				continue
			}
		}
		x, good := t.Decode(c, v, what)
		if !good {
			ok = false
			o.vals[f.Name] = Val{Node: v} // written but bad: neither required nor defaulted
			continue
		}
		if a != nil {
			x = a.To(x)
		}
		o.vals[f.Name] = Val{Value: x, Key: k, Node: v}
	}
	for _, f := range decl.Fields {
		if _, set := o.vals[f.Name]; set {
			continue
		}
		if f.Required {
			if f.Need != "" {
				c.Errorf(n, "%s needs %q: %s", decl.Name, f.Name, f.Need)
			} else {
				c.Errorf(n, "%s needs %q", decl.Name, f.Name)
			}
			ok = false
			continue
		}
		if f.Default != nil {
			o.vals[f.Name] = Val{Value: f.Default}
		}
	}
	return o, ok
}

// Within runs fn with decl as an enclosing declaration, so keys decoded in
// fn (a Later field's value, decoded by its owner) get hints from it.
func (c *Ctx) Within(decl *Decl, fn func()) {
	c.stack = append(c.stack, decl)
	defer func() { c.stack = c.stack[:len(c.stack)-1] }()
	fn()
}

// Lookup is the value of key k in mapping n, or nil (also when n is not a
// mapping).
func Lookup(n *yaml.Node, k string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i+1]
		}
	}
	return nil
}

func hasKey(n *yaml.Node, key string) bool { return Lookup(n, key) != nil }

// unknown words the message for key k that decl does not have: where it
// belongs when an enclosing declaration (or an inner one) has it, else the
// closest known key.
func (c *Ctx) unknown(n *yaml.Node, decl *Decl, k string) string {
	msg := "unknown key " + strconv.Quote(k) + " in " + decl.Name
	for i := len(c.stack) - 2; i >= 0; i-- {
		if _, ok := c.stack[i].Field(k); ok {
			return msg + " (" + k + " is a key of " + c.stack[i].Name + ", not of " + decl.Name + ")"
		}
	}
	if under := inner(n, decl, k); len(under) > 0 {
		return msg + " (" + k + " belongs under " + orList(under) + ")"
	}
	known := decl.Keys()
	for _, f := range decl.Fields {
		known = append(known, f.Deprecated...)
		for _, a := range f.Aliases {
			known = append(known, a.Name)
		}
	}
	if s := Suggest(k, known); s != "" {
		if f, ok := decl.Field(s); ok {
			s = f.Name
		}
		return msg + " (did you mean " + strconv.Quote(s) + "?)"
	}
	return msg
}

// inner lists the fields of decl whose own declaration has key k,
// preferring those written in n (a step with a request and a stray query).
func inner(n *yaml.Node, decl *Decl, k string) []string {
	var all, written []string
	for _, f := range decl.Fields {
		for _, d := range declsOf(f.Type) {
			if _, ok := d.Field(k); ok {
				all = append(all, f.Name)
				if hasKey(n, f.Name) {
					written = append(written, f.Name)
				}
				break
			}
		}
	}
	if len(written) > 0 {
		return written
	}
	if len(all) > 3 {
		return nil // too many to help
	}
	return all
}

// Container is a type that holds declared mappings (an object, a list of
// them, a value that is a scalar or a mapping), for misplaced-key hints.
type Container interface {
	Decls() []*Decl
}

func declsOf(t Type) []*Decl {
	if c, ok := t.(Container); ok {
		return c.Decls()
	}
	return nil
}

func orList(names []string) string {
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		return names[0] + " or " + names[1]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Strings is a list-of-strings key's value or default (nil when neither).
func (o *Obj) Strings(name string) []string {
	list, _ := o.Value(name).([]any)
	if list == nil {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// StringMap is a map-of-strings key's value (MapOf String), nil when absent.
func (o *Obj) StringMap(name string) map[string]string {
	entries, _ := o.Value(name).([]Entry)
	if entries == nil {
		return nil
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		if s, ok := e.Value.(string); ok {
			out[e.Key] = s
		}
	}
	return out
}

// Obj is a nested mapping key's value (Object), nil when absent.
func (o *Obj) Obj(name string) *Obj { x, _ := o.Value(name).(*Obj); return x }
