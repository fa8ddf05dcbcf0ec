package manifest

import (
	"cmp"
	"strconv"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/limits"
	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

// toolDecl declares a tool file (tools/NAME.yaml or a "yaml tool NAME"
// block): the decoder and the reference read it; the steps package
// declares the steps and interpreter the limits.
var toolDecl = &yamlx.Decl{Name: "a tool", Title: "A PKU harness tool (tools/NAME.yaml or a fenced yaml tool NAME block)", Fields: []yamlx.Field{
	{Name: "title", Type: prose{Max: MaxNameLen}, Doc: "What people see; the reference requires it (without one: a warning, and people see the name)."},
	{Name: "description", Type: prose{Max: MaxDescriptionLen, Multiline: true, NonEmpty: true}, Required: true,
		Doc: "For the model: what the tool does and when to use it; say units and formats."},
	{Name: "effect", Type: yamlx.Enum{Values: []string{"read", "write", "money", "public"}, Rule: "must be read, write, money or public"}, Required: true,
		Doc: "What it does to the world: read < write < money < public."},
	{Name: "untrusted", Type: yamlx.Bool{}, Default: false, Doc: "Its results may hold text from strangers."},
	{Name: "userOnly", Type: yamlx.Bool{}, Default: false, Doc: "Hidden from the model: only the user may run it."},
	{Name: "alwaysAsk", Type: yamlx.Bool{}, Default: false, Doc: "Ask before every agent call, whatever the mode."},
	{Name: "serial", Type: yamlx.Bool{}, Default: false, Doc: "Never runs concurrently with itself."},
	{Name: "grant", Type: yamlx.Bool{}, Default: false,
		Doc: "The reference's grant tool: its approval may be answered once or always, and steps read the answer as $grant (here every ask that may become a standing grant offers always)."},
	{Name: "onDemand", Type: yamlx.Bool{}, Default: false, Doc: "A key of the reference's bundled tools, read and ignored here (with a warning): a document's tools are all listed."},
	{Name: "dayScoped", Type: yamlx.Bool{}, Default: false, Doc: "A key of the reference's bundled tools, read and ignored here (with a warning)."},
	{Name: "destructive", Type: yamlx.Bool{}, Default: false,
		Doc: "It deletes, cancels or overwrites (MCP destructiveHint); a write that only adds is not. Not on read tools."},
	{Name: "idempotent", Type: yamlx.Bool{}, Default: false,
		Doc: "Calling it again with the same input has no further effect (MCP idempotentHint); reads always are."},
	{Name: "input", Type: yamlx.Later{Of: jsonSchemaType{Input: true}}, Doc: "A JSON Schema (draft 2020-12) of the input object (default: no input)."},
	{Name: "output", Type: yamlx.Later{Of: jsonSchemaType{}}, Doc: "An optional JSON Schema of the result."},
	{Name: "limits", Type: yamlx.Later{Of: yamlx.Object{Decl: limits.Decl}}, Doc: "Per-tool limits, each at most the host's (Limits of a call)."},
	{Name: "steps", Type: yamlx.Later{Of: stepsRef{}}, Required: true, Doc: "The steps, run in order."},
}}

// ToolSchema is the JSON Schema of a tool file, generated from the
// declarations (docs/schema/tool.schema.json). g must already define what
// the tool refers to but manifest does not declare: "steps" (and what it
// refers to), from the steps package, which calls this.
func ToolSchema(g *yamlx.Gen) map[string]any {
	root := g.Object(toolDecl)
	return yamlx.SchemaFile("https://pkuinfo.github.io/harness/schema/tool.schema.json", toolDecl.Title,
		"Reference: docs/plugin-format.md. Generated from the declarations of the tool file, the steps and the limits: go test ./steps -run TestToolSchemaUpToDate -update.", root, g)
}

// MaxSteps bounds a tool's top-level steps.
const MaxSteps = 200

// jsonSchemaType is a tool's input or output: a JSON Schema object, its
// strings held to the rules of text the model reads.
type jsonSchemaType struct{ Input bool }

func (t jsonSchemaType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	v := schemaObject(c.Doc, n, what, c.L)
	return v, v != nil
}
func (t jsonSchemaType) Schema(*yamlx.Gen) map[string]any {
	out := map[string]any{"$ref": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
	if t.Input {
		out["properties"] = map[string]any{"type": map[string]any{"const": "object"}}
		out["required"] = []any{"type"}
	}
	return out
}
func (jsonSchemaType) Name() string { return "JSON Schema" }

// stepsRef is the steps list: the steps package decodes and describes it.
type stepsRef struct{}

func (stepsRef) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		c.Errorf(n, "steps must be a non-empty list of steps")
		return nil, false
	}
	if len(n.Content) > MaxSteps {
		c.Errorf(n, "more than %d steps", MaxSteps)
		return nil, false
	}
	return n, true
}
func (stepsRef) Schema(*yamlx.Gen) map[string]any { return yamlx.Ref("steps") }
func (stepsRef) Name() string                     { return "steps" }

func parseTool(b *Block, sc *schemaCompiler, l *diag.List) *Tool {
	d := b.Doc
	if d == nil || !d.Safe() {
		if d != nil && d.Root == nil && !l.HasErrors() {
			l.Errorf(b.Pos, "tool %q is empty", b.Name)
		}
		return nil
	}
	decl := *toolDecl
	decl.Name = "tool " + strconv.Quote(b.Name)
	c := yamlx.NewCtx(d, l, nil)
	o, _ := c.Object(d.Root, &decl)
	if o == nil {
		return nil
	}
	t := &Tool{Name: b.Name, Doc: d, File: d.File, Pos: d.NodePos(d.Root), Title: cmp.Or(o.String("title"), b.Name),
		Description: o.String("description"), Effect: Effect(o.String("effect")),
		Untrusted: o.Bool("untrusted"), UserOnly: o.Bool("userOnly"), AlwaysAsk: o.Bool("alwaysAsk"), Serial: o.Bool("serial"), Grant: o.Bool("grant"),
		Destructive: o.Bool("destructive"), Idempotent: o.Bool("idempotent"), Limits: o.NodeOf("limits")}
	if o.NodeOf("title") == nil {
		l.Warnf(t.Pos, "tool %s has no title: the reference requires one; people see the name instead", b.Name)
	}
	for _, k := range []string{"onDemand", "dayScoped"} {
		if n := o.NodeOf(k); n != nil {
			l.Warnf(d.NodePos(n), "%s is a key of the reference's bundled tools: a plugin document reads it and nothing follows from it", k)
		}
	}
	if t.Destructive && t.Effect == Read {
		l.Errorf(d.NodePos(o.NodeOf("destructive")), "a read tool cannot be destructive: destructive marks a write that deletes, cancels or overwrites")
	}
	t.Input = map[string]any{"type": "object", "properties": map[string]any{}}
	n := d.Root
	if v, in, _ := c.Later(o, "input"); in != nil {
		t.Input, n = asObject(v), in
	}
	if t.Input != nil {
		if typ, _ := t.Input["type"].(string); typ != "object" {
			l.Errorf(d.NodePos(n), "input must be a JSON Schema with type: object (the model passes named arguments)")
		} else {
			t.InputSchema = sc.compileAt("input", t.Input, d, n, d.NodePos(n), l)
		}
	}
	if v, out, _ := c.Later(o, "output"); v != nil {
		t.Output = asObject(v)
		sc.compileAt("output", t.Output, d, out, d.NodePos(out), l)
	}
	if v, _, _ := c.Later(o, "steps"); v != nil {
		t.Steps = v.(*yaml.Node)
	}
	return t
}

func schemaObject(d *yamlx.Doc, n *yaml.Node, what string, l *diag.List) map[string]any {
	if n.Kind != yaml.MappingNode {
		l.Errorf(d.NodePos(n), "%s must be a JSON Schema object", what)
		return nil
	}
	v, ok := d.Value(n, l)
	if !ok {
		return nil
	}
	checkSchemaText(d, n, what, l)
	obj, _ := v.(map[string]any)
	return obj
}

// checkSchemaText holds a schema's strings, keys included, to the rules of
// other text the model reads: the catalogue hands the whole schema to the
// model (descriptions, titles, enum values, property names), and text
// hidden from the reviewer must not reach it there either.
func checkSchemaText(d *yamlx.Doc, n *yaml.Node, what string, l *diag.List) {
	bad := 0
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if bad >= 20 {
			return
		}
		switch n.Kind {
		case yaml.MappingNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c)
			}
		case yaml.ScalarNode:
			if n.Tag != "!!str" {
				return
			}
			if err := checkText(n.Value, true); err != nil {
				l.Errorf(d.OffsetPos(n, err.Off), "a string in %s %v", what, err)
				bad++
			}
		}
	}
	walk(n)
}

// checkFixedInput checks the input a data source or command (what) fixes
// for tool t against the tool's input schema, at pos.
func checkFixedInput(t *Tool, in map[string]any, pos diag.Pos, what string, l *diag.List) {
	if t.InputSchema == nil {
		return
	}
	if in == nil {
		in = map[string]any{}
	}
	if err := CheckInputBounds(t.InputSchema, in); err != nil {
		l.Errorf(pos, "%s, tool %q: %v", what, t.Name, err)
	} else if err := t.InputSchema.Validate(in); err != nil {
		l.Errorf(pos, "%s: its input does not fit tool %q: %s", what, t.Name, SchemaMessage(err))
	}
}

// crossCheck checks references between parts: data sources and commands name
// tools of the document, widgets name templates and data sources, settings
// name preferences, translations and legacy maps name real tools.
func crossCheck(p *Plugin, l *diag.List) {
	for _, ds := range p.DataSources {
		t := p.Tool(ds.Tool)
		switch {
		case t == nil && p.Broken[ds.Tool]:
		case t == nil:
			l.Errorf(ds.Pos, "data source %q names tool %q, which the document does not define", ds.Name, ds.Tool)
		case t.Effect != Read:
			l.Errorf(ds.Pos, "data source %q names tool %q, whose effect is %s: data sources read only", ds.Name, ds.Tool, t.Effect)
		case t.UserOnly:
			l.Errorf(ds.Pos, "data source %q names a userOnly tool", ds.Name)
		default:
			checkFixedInput(t, ds.Args, ds.Pos, "data source "+strconv.Quote(ds.Name), l)
		}
	}
	for _, c := range p.Contributes.Commands {
		if t := p.Tool(c.Tool); t != nil {
			checkFixedInput(t, c.Input, c.Pos, "command "+strconv.Quote(c.Key), l)
		} else if !p.Broken[c.Tool] {
			l.Errorf(c.Pos, "command %q names tool %q, which the document does not define", c.Key, c.Tool)
		}
	}
	sources := map[string]bool{}
	for _, ds := range p.DataSources {
		sources[ds.Name] = true
	}
	for _, w := range p.Contributes.Widgets {
		if _, ok := p.Widgets[w.Template]; !ok {
			l.Errorf(w.Pos, "widget %q uses template %q: add widgets/%s.json or a \"json widget %s\" block", w.Key, w.Template, w.Template, w.Template)
		}
		if w.DataSource != "" && !sources[w.DataSource] {
			l.Errorf(w.Pos, "widget %q names data source %q, which dataSources does not define", w.Key, w.DataSource)
		}
	}
	for _, s := range p.Contributes.Screens {
		if _, ok := p.Widgets[s.Template]; !ok {
			l.Errorf(s.Pos, "screen %q uses template %q, which the document does not define", s.Key, s.Template)
		}
	}
	prefs := map[string]bool{}
	for _, pr := range p.Preferences {
		prefs[pr.Name] = true
	}
	for _, r := range p.Contributes.Settings {
		if r.Preference != "" && !prefs[r.Preference] {
			l.Errorf(r.Pos, "settings row %q names preference %q, which the document does not define", r.Key, r.Preference)
		}
		if r.Tool != "" && !p.Defines(r.Tool) {
			l.Errorf(r.Pos, "settings row %q names tool %q, which the document does not define", r.Key, r.Tool)
		}
	}
	for lang, tr := range p.I18n {
		for name := range tr.Tools {
			if !p.Defines(name) {
				l.Errorf(p.KeyPos["i18n"], "i18n.%s.tools names %q, which the document does not define", lang, name)
			}
		}
	}
	for old, cur := range p.Legacy.Tools {
		if !p.Defines(cur) {
			l.Errorf(p.KeyPos["legacy"], "legacy.tools maps %q to %q, which the document does not define", old, cur)
		}
	}
	if len(p.Tools) == 0 && len(p.Broken) == 0 && p.ID != "" {
		l.Warnf(p.Pos, "the document defines no tools")
	}
}
