package steps

import (
	"slices"

	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
	"go.yaml.in/yaml/v3"
)

// The declared types of step fields: each decodes (and compiles) a value
// with the step compiler held in the decoding's Env, and describes itself
// as JSON Schema. A kind's declaration names them; only the kind's own file
// knows what it reads.

func compilerOf(c *yamlx.Ctx) *Compiler { return c.Env.(*Compiler) }

// JQType is a jq program (a string, or a bare number, boolean or null as
// the program it spells); it decodes to *JQ.
var JQType yamlx.Type = jqType{}

type jqType struct{}

func (jqType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	q := compilerOf(c).CompileJQ(n, what)
	return q, q != nil
}
func (jqType) Schema(*yamlx.Gen) map[string]any {
	return map[string]any{"type": []any{"string", "number", "boolean", "null"}}
}
func (jqType) Name() string { return "jq" }

// TemplateType is a ${ } template escaped with Esc; it decodes to *Template.
type TemplateType struct {
	Esc   Escape
	Label string // "template" unless set
}

func (t TemplateType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	tp := compilerOf(c).CompileTemplate(n, what, t.Esc)
	return tp, tp != nil
}
func (TemplateType) Schema(*yamlx.Gen) map[string]any { return yamlx.Scalar{}.Schema(nil) }
func (t TemplateType) Name() string {
	if t.Label != "" {
		return t.Label
	}
	return "template"
}

// ValueType is any value whose strings are templates; it decodes to
// *valueTemplate.
var ValueType yamlx.Type = valueType{}

type valueType struct{}

func (valueType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	v := compilerOf(c).ValueTemplate(n)
	return v, v != nil
}
func (valueType) Schema(*yamlx.Gen) map[string]any { return map[string]any{} }
func (valueType) Name() string                     { return "value" }

// NameType is a variable name a step binds; it decodes to the name.
var NameType yamlx.Type = nameType{}

type nameType struct{}

func (nameType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	s, ok := c.Doc.String(n, what, c.L)
	if !ok {
		return nil, false
	}
	switch {
	case !nameRE.MatchString(s):
		c.Errorf(n, "%s: %q is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", what, s)
		return nil, false
	case slices.Contains(reservedNames, s):
		c.Errorf(n, "%s: $%s is reserved", what, s)
		return nil, false
	}
	return s, true
}
func (nameType) Schema(*yamlx.Gen) map[string]any {
	return map[string]any{"type": "string", "pattern": nameRE.String(), "not": yamlx.Enum{Values: reservedNames}.Schema(nil)}
}
func (nameType) Name() string { return "name" }

// StepsType is a list of sub-steps. A kind declares it inside yamlx.Later
// and decodes the node with Compiler.Nested, which scopes the names.
var StepsType yamlx.Type = stepsType{}

type stepsType struct{}

func (stepsType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	b := compilerOf(c).Block(n, what)
	return b, b != nil
}
func (stepsType) Schema(g *yamlx.Gen) map[string]any {
	return g.Define("steps", func() map[string]any {
		return map[string]any{"type": "array", "minItems": 1, "maxItems": manifest.MaxSteps, "items": yamlx.Ref("step")}
	})
}
func (stepsType) Name() string { return "steps" }

// TemplateMap is a mapping of names to templates (query, headers, form);
// it decodes to []yamlx.Entry of *Template.
var TemplateMap yamlx.Type = yamlx.Named{Type: yamlx.MapOf{Of: TemplateType{Esc: Text}}, Label: "map of templates"}
