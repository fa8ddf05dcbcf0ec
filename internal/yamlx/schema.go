package yamlx

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Gen generates JSON Schema (draft 2020-12) from declarations. Shared
// definitions (a Decl with Def, or what a caller adds with Define) gather in
// Defs, for the document's "$defs".
type Gen struct {
	Defs map[string]any
}

// NewGen returns a generator with no definitions yet.
func NewGen() *Gen { return &Gen{Defs: map[string]any{}} }

// Ref is a reference to definition name of the same document.
func Ref(name string) map[string]any { return map[string]any{"$ref": "#/$defs/" + name} }

// Define adds definition name, built once (a recursive build sees its own
// reference), and returns a reference to it.
func (g *Gen) Define(name string, build func() map[string]any) map[string]any {
	if _, ok := g.Defs[name]; !ok {
		g.Defs[name] = map[string]any{} // a placeholder for recursion
		g.Defs[name] = build()
	}
	return Ref(name)
}

// Object is the schema of a declared mapping: its properties with
// descriptions and defaults (deprecated spellings marked so), the required
// keys, and no other keys unless Rest types them. A Decl with Def becomes a
// definition and a reference to it.
func (g *Gen) Object(d *Decl) map[string]any {
	if d.Def != "" {
		return g.Define(d.Def, func() map[string]any { return g.object(d) })
	}
	return g.object(d)
}

func (g *Gen) object(d *Decl) map[string]any {
	props := map[string]any{}
	var required []any
	for _, f := range d.Fields {
		props[f.Name] = g.Field(f)
		for _, old := range f.Deprecated {
			p := f.Type.Schema(g)
			p["description"] = "Deprecated: the old spelling of " + f.Name + "."
			p["deprecated"] = true
			props[old] = p
		}
		for _, a := range f.Aliases {
			p := a.Type.Schema(g)
			p["description"] = "Deprecated: the old spelling of " + f.Name + ", " + a.Doc + "."
			p["deprecated"] = true
			props[a.Name] = p
		}
		if f.Required {
			required = append(required, f.Name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if d.Rest != nil {
		out["additionalProperties"] = d.Rest.Schema(g)
	} else {
		out["additionalProperties"] = false
	}
	if len(required) > 0 {
		out["required"] = required
	}
	for k, v := range d.Schema {
		out[k] = v
	}
	if d.Title != "" {
		out["title"] = d.Title
	}
	if d.Doc != "" {
		out["description"] = d.Doc
	}
	return out
}

// Field is one field's schema: its type's, with the doc line as the
// description and the default.
func (g *Gen) Field(f Field) map[string]any {
	// A type's schema is a fresh map (a reference too: draft 2020-12 reads
	// $ref beside other keywords), so the field's words go in it.
	out := f.Type.Schema(g)
	if f.Doc != "" {
		out["description"] = f.Doc
	}
	if f.Default != nil && !f.Required {
		out["default"] = jsonDefault(f.Default)
	}
	return out
}

func jsonDefault(v any) any {
	switch x := v.(type) {
	case time.Duration:
		return x.String()
	case fmt.Stringer:
		return x.String()
	}
	return v
}

// Table renders a declaration's keys as a Markdown table (key, type,
// default or "required", doc), for the reference.
func (d *Decl) Table() string {
	var b strings.Builder
	b.WriteString("| key | type | default | |\n|---|---|---|---|\n")
	for _, f := range d.Fields {
		def := f.DefaultText()
		if f.Required {
			def = "required"
		}
		doc := f.Doc
		old := slices.Clone(f.Deprecated)
		for _, a := range f.Aliases {
			old = append(old, a.Name+", "+a.Doc)
		}
		if len(old) > 0 {
			doc += " (old spelling: " + strings.Join(old, "; ") + ")"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, escCell(f.Type.Name()), escCell(def), escCell(doc))
	}
	return b.String()
}

// DefaultText is the default as the reference writes it ("" for none).
func (f Field) DefaultText() string {
	if f.Default == nil {
		return ""
	}
	return fmt.Sprint(jsonDefault(f.Default))
}

func escCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
