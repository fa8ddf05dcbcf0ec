package manifest

import (
	"strings"
	"unicode/utf8"

	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

// The declared value types of the manifest's surfaces (front matter, tool
// files), beside yamlx's: each decodes itself with the manifest's messages
// and describes itself as JSON Schema.

// prose is a string people or the model read: at most Max characters, held
// to checkText's rules (Multiline allows line breaks and tabs), and with
// NonEmpty not blank.
type prose struct {
	Max       int
	Multiline bool
	NonEmpty  bool
}

func (t prose) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	s, ok := c.Doc.String(n, what, c.L)
	if !ok {
		return nil, false
	}
	if t.Max > 0 && utf8.RuneCountInString(s) > t.Max {
		c.Errorf(n, "%s is longer than %d characters", what, t.Max)
		ok = false
	}
	if err := checkText(s, t.Multiline); err != nil {
		c.L.Errorf(c.Doc.OffsetPos(n, err.Off), "%s %v", what, err)
		ok = false
	}
	if t.NonEmpty && strings.TrimSpace(s) == "" {
		c.Errorf(n, "%s is empty", what)
		ok = false
	}
	return s, ok
}

func (t prose) Schema(*yamlx.Gen) map[string]any {
	out := map[string]any{"type": "string"}
	if t.Max > 0 {
		out["maxLength"] = t.Max
	}
	if t.NonEmpty {
		out["minLength"] = 1
	}
	return out
}

func (t prose) Name() string { return "text" }

// keyWord is an item's key or name: unique within its list.
var keyWord = yamlx.String{Pattern: keyRE, MaxLen: 40, Rule: "must match [a-z][A-Za-z0-9_-]* (at most 40 characters)", Label: "name"}

// jsonObject is a mapping read as JSON data.
type jsonObject struct{}

func (jsonObject) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	if n.Kind != yaml.MappingNode {
		c.Errorf(n, "%s must be a mapping, not %s", what, yamlx.Describe(n))
		return nil, false
	}
	return c.Doc.Value(n, c.L)
}
func (jsonObject) Schema(*yamlx.Gen) map[string]any { return map[string]any{"type": "object"} }
func (jsonObject) Name() string                     { return "mapping" }

// items reads a Later list field of o (a list of mappings, say) and
// returns its decoded items with their nodes; bad items are left out, the
// good ones kept.
func items(c *yamlx.Ctx, o *yamlx.Obj, name string) (vals []*yamlx.Obj, nodes []*yaml.Node) {
	v, n, _ := c.Later(o, name)
	list, _ := v.([]any)
	if n == nil || len(list) != len(n.Content) {
		return nil, nil
	}
	for i, x := range list {
		if ob, ok := x.(*yamlx.Obj); ok && ob != nil {
			vals = append(vals, ob)
			nodes = append(nodes, n.Content[i])
		}
	}
	return vals, nodes
}

// asList is a decoded list, or nil.
func asList(v any) []any { l, _ := v.([]any); return l }

// asEntries is a decoded mapping of names (MapOf, Keyed), or nil.
func asEntries(v any) []yamlx.Entry { e, _ := v.([]yamlx.Entry); return e }

// laterObj reads a Later mapping field of o; nil when absent or not a
// mapping.
func laterObj(c *yamlx.Ctx, o *yamlx.Obj, name string) *yamlx.Obj {
	v, _, _ := c.Later(o, name)
	x, _ := v.(*yamlx.Obj)
	return x
}
