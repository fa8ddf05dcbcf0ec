package yamlx

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Keyed is the reference's Record<string, X>: a mapping of names (read with
// Key) to mappings declared by Of. The old form, a list of the same mappings
// each naming itself with the key By, is still read, with a warning that
// says to write the mapping. Either way it decodes to []Entry in source
// order, each Value an *Obj (kept when part of it was bad, so later checks
// see its good keys) and KeyN the name's node.
type Keyed struct {
	Of  *Decl
	By  string // the old list form's naming key ("name")
	Key Type   // the names' type
	Max int
	// Old, when set, declares an item of the old list (with its By key)
	// whose rules differ from Of's: keys the list left optional, defaults,
	// old spellings.
	Old *Decl
}

func (t Keyed) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	if n != nil && n.Kind == yaml.SequenceNode {
		return t.decodeList(c, n, what)
	}
	if n == nil || n.Kind != yaml.MappingNode {
		c.Errorf(n, "%s must be a mapping of %s to %s, not %s", what, t.By, t.Of.Name, Describe(n))
		return nil, false
	}
	if t.Max > 0 && len(n.Content)/2 > t.Max {
		c.Errorf(n, "%s holds more than %d keys", what, t.Max)
		return nil, false
	}
	ok := true
	out := make([]Entry, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, good := t.Key.Decode(c, k, what+" "+t.By); !good {
			ok = false
			continue
		}
		o, good := c.Object(v, t.Of)
		ok = ok && good
		if o != nil {
			out = append(out, Entry{Key: k.Value, KeyN: k, Node: v, Value: o})
		}
	}
	return out, ok
}

// decodeList reads the old form: each item names itself with t.By.
func (t Keyed) decodeList(c *Ctx, n *yaml.Node, what string) (any, bool) {
	c.L.Warnf(c.Doc.NodePos(n), "%s as a list of {%s, …} is the old spelling: write a mapping keyed by %s (%s: {…})", what, t.By, t.By, t.By)
	if t.Max > 0 && len(n.Content) > t.Max {
		c.Errorf(n, "%s holds more than %d items", what, t.Max)
		return nil, false
	}
	old := t.listDecl()
	ok := true
	seen := map[string]bool{}
	out := make([]Entry, 0, len(n.Content))
	for _, item := range n.Content {
		o, good := c.Object(item, old)
		name, unique := c.Unique(o, t.By, seen) // a missing name is bad already
		ok = ok && good && unique
		if unique {
			out = append(out, Entry{Key: name, KeyN: o.NodeOf(t.By), Node: item, Value: o})
		}
	}
	return out, ok
}

// Unique is the string field of o, a decoded item of a list, when it is set
// and no item before it (those in seen) has the same; a second one is an
// error at its value: `key "x" is used twice`.
func (c *Ctx) Unique(o *Obj, field string, seen map[string]bool) (string, bool) {
	s := o.String(field)
	if s == "" {
		return "", false
	}
	if seen[s] {
		c.Errorf(o.NodeOf(field), "%s %q is used twice", field, s)
		return "", false
	}
	seen[s] = true
	return s, true
}

func (t Keyed) listDecl() *Decl {
	if t.Old != nil {
		return t.Old
	}
	return &Decl{Name: t.Of.Name, Fields: append([]Field{{Name: t.By, Type: t.Key, Required: true, Doc: "The old form's name: now the key."}}, t.Of.Fields...)}
}

func (t Keyed) Schema(g *Gen) map[string]any {
	m := map[string]any{"type": "object", "additionalProperties": g.Object(t.Of), "propertyNames": t.Key.Schema(g)}
	l := map[string]any{"type": "array", "items": g.Object(t.listDecl()), "deprecated": true,
		"description": "Deprecated: the old list form; write a mapping keyed by " + t.By + "."}
	if t.Max > 0 {
		m["maxProperties"], l["maxItems"] = t.Max, t.Max
	}
	return map[string]any{"oneOf": []any{m, l}}
}

func (t Keyed) Name() string   { return "map of " + t.By + " to " + Object{t.Of}.Name() }
func (t Keyed) Decls() []*Decl { return []*Decl{t.Of} }

// Short is a mapping declared by Decl or, the old shorthand, a scalar read
// with Scalar (the type of the field Key when Scalar is nil) as the value of
// Key alone, with a warning that says Hint ("write {title: …}"). Either way
// it decodes to *Obj.
type Short struct {
	Decl   *Decl
	Key    string
	Scalar Type
	Hint   string
}

func (t Short) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		return c.Object(n, t.Decl)
	}
	f, _ := t.Decl.Field(t.Key)
	st := t.Scalar
	if st == nil {
		st = f.Type
	}
	v, ok := st.Decode(c, n, what)
	if !ok {
		return nil, false
	}
	c.L.Warnf(c.Doc.NodePos(n), "%s: %s is the old shorthand of %s: %s", what, strconv.Quote(n.Value), t.Decl.Name, t.Hint)
	o := &Obj{Decl: t.Decl, Node: n, vals: map[string]Val{t.Key: {Value: v, Key: n, Node: n}}}
	for _, f := range t.Decl.Fields {
		if _, set := o.vals[f.Name]; !set && f.Default != nil {
			o.vals[f.Name] = Val{Value: f.Default}
		}
	}
	return o, true
}

func (t Short) Schema(g *Gen) map[string]any {
	f, _ := t.Decl.Field(t.Key)
	st := t.Scalar
	if st == nil {
		st = f.Type
	}
	old := st.Schema(g)
	old["deprecated"] = true
	old["description"] = "Deprecated: the old shorthand for {" + t.Key + "}."
	return map[string]any{"oneOf": []any{g.Object(t.Decl), old}}
}

func (t Short) Name() string   { return Object{t.Decl}.Name() }
func (t Short) Decls() []*Decl { return []*Decl{t.Decl} }
