package steps

import (
	"strings"

	"github.com/pkuinfo/harness/internal/limits"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
)

// JSONSchema returns the JSON Schema definitions of a step, generated from
// the kinds' declarations in r, as the `$defs` object of a schema document
// (draft 2020-12): "step" is one step (a oneOf of one object per kind, each
// with its kind key required and the modifiers as and if), "steps" a list
// of steps, "as" and "if" the modifiers, and "kind.NAME" the value under
// kind NAME's key, plus what the declarations share and "limits", a
// tool's limits: (from internal/limits). References point into
// the document's own $defs ("#/$defs/step"), so the result goes there
// unchanged; docs/schema/tool.schema.json holds it, and a test keeps it up
// to date. It knows no kind: each describes itself.
func JSONSchema(r *Registry) (map[string]any, error) {
	g := yamlx.NewGen()
	stepDefs(g, r)
	return g.Defs, nil
}

// ToolSchema is the whole JSON Schema of a tool file
// (docs/schema/tool.schema.json): the tool's keys declared by manifest, the
// steps by the kinds in r, the limits by internal/limits.
func ToolSchema(r *Registry) map[string]any {
	g := yamlx.NewGen()
	stepDefs(g, r)
	return manifest.ToolSchema(g)
}

func stepDefs(g *yamlx.Gen, r *Registry) {
	for _, f := range modifierDecl.Fields {
		g.Define(f.Name, func() map[string]any { return g.Field(f) })
	}
	StepsType.Schema(g)
	g.Object(limits.Decl) // "limits", a definition
	kinds := r.Kinds()
	var oneOf []any
	for _, k := range kinds {
		s, _ := r.Spec(k)
		g.Define("kind."+k, func() map[string]any { return kindValue(g, s) })
		props := map[string]any{k: yamlx.Ref("kind." + k)}
		for _, f := range modifierDecl.Fields {
			props[f.Name] = yamlx.Ref(f.Name)
		}
		oneOf = append(oneOf, map[string]any{
			"type":                 "object",
			"required":             []any{k},
			"properties":           props,
			"additionalProperties": false,
		})
	}
	g.Defs["step"] = map[string]any{
		"description": "One step: exactly one kind key (" + strings.Join(kinds, ", ") + "), plus the modifiers " + strings.Join(modifierDecl.Keys(), " and ") + ".",
		"oneOf":       oneOf,
	}
}

// kindValue is the schema of the value under a kind's key: its scalar form,
// its mapping, or either.
func kindValue(g *yamlx.Gen, s Spec) map[string]any {
	var forms []map[string]any
	if s.Scalar != nil {
		forms = append(forms, s.Scalar.Schema(g))
	}
	if s.Decl != nil {
		forms = append(forms, g.Object(s.Decl))
	}
	out := forms[0]
	if len(forms) > 1 {
		out = map[string]any{"oneOf": []any{forms[0], forms[1]}}
	}
	out["description"] = s.Summary
	return out
}
