package yamlx

import "go.yaml.in/yaml/v3"

// Later decodes o's Later field name with the type it wraps, within o's
// declaration (so misplaced keys get hints from it), once its owner is
// ready. Unlike a field decoded in place, it returns what decoded even when
// part of it was bad: a list of mappings keeps its good items and the good
// keys of a bad one, so later checks still see them. v and n are nil when
// the key is absent.
func (c *Ctx) Later(o *Obj, name string) (v any, n *yaml.Node, ok bool) {
	if o == nil {
		return nil, nil, true
	}
	n = o.NodeOf(name)
	f, known := o.Decl.Field(name)
	if n == nil || !known {
		return nil, nil, true
	}
	t := f.Type
	if l, isLater := t.(Later); isLater {
		t = l.Of
	}
	c.Within(o.Decl, func() { v, ok = t.Decode(c, n, name) })
	return v, n, ok
}
