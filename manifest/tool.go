package manifest

import (
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

// ToolKeys are the keys a tool may hold.
var ToolKeys = []string{"title", "description", "effect", "untrusted", "userOnly", "alwaysAsk", "serial",
	"destructive", "idempotent", "input", "output", "steps", "limits"}

// MaxSteps bounds a tool's top-level steps.
const MaxSteps = 200

func parseTool(b *Block, sc *schemaCompiler, l *diag.List) *Tool {
	d := b.Doc
	if d == nil || !d.Safe() {
		if d != nil && d.Root == nil && !l.HasErrors() {
			l.Errorf(b.Pos, "tool %q is empty", b.Name)
		}
		return nil
	}
	m, ok := d.Mapping(d.Root, "a tool", ToolKeys, l)
	if !ok {
		return nil
	}
	t := &Tool{Name: b.Name, Doc: d, File: d.File, Pos: d.NodePos(d.Root)}
	str := func(key string, multiline bool) string {
		f, ok := m.Get(key)
		if !ok {
			return ""
		}
		s, _ := d.String(f.Value, key, l)
		if err := checkText(s, multiline); err != nil {
			l.Errorf(d.OffsetPos(f.Value, err.Off), "%s %v", key, err)
		}
		return s
	}
	boolean := func(key string) bool {
		f, ok := m.Get(key)
		if !ok {
			return false
		}
		v, _ := d.Bool(f.Value, key, l)
		return v
	}
	t.Title = str("title", false)
	if len([]rune(t.Title)) > MaxNameLen {
		l.Errorf(t.Pos, "title is longer than %d characters", MaxNameLen)
	}
	if t.Title == "" {
		t.Title = t.Name
	}
	t.Description = str("description", true)
	if f, ok := m.Get("description"); !ok || t.Description == "" {
		pos := t.Pos
		if ok {
			pos = d.NodePos(f.Value)
		}
		l.Errorf(pos, "tool %q needs a description: the model reads it to decide when to call the tool", t.Name)
	} else if len([]rune(t.Description)) > MaxDescriptionLen {
		l.Errorf(d.NodePos(f.Value), "description is longer than %d characters", MaxDescriptionLen)
	}
	if f, ok := m.Get("effect"); !ok {
		l.Errorf(t.Pos, "tool %q needs an effect: read, write, money or public", t.Name)
	} else if s, ok := d.String(f.Value, "effect", l); ok {
		t.Effect = Effect(s)
		if t.Effect.Rank() < 0 {
			msg := "effect %q must be read, write, money or public"
			if sg := yamlx.Suggest(s, []string{"read", "write", "money", "public"}); sg != "" {
				l.Errorf(d.NodePos(f.Value), msg+" (did you mean %q?)", s, sg)
			} else {
				l.Errorf(d.NodePos(f.Value), msg, s)
			}
		}
	}
	t.Untrusted = boolean("untrusted")
	t.UserOnly = boolean("userOnly")
	t.AlwaysAsk = boolean("alwaysAsk")
	t.Serial = boolean("serial")
	t.Destructive = boolean("destructive")
	t.Idempotent = boolean("idempotent")
	if t.Destructive && t.Effect == Read {
		f, _ := m.Get("destructive")
		l.Errorf(d.NodePos(f.Value), "a read tool cannot be destructive: destructive marks a write that deletes, cancels or overwrites")
	}
	if f, ok := m.Get("input"); ok {
		t.Input = schemaObject(d, f.Value, "input", l)
	} else {
		t.Input = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if t.Input != nil {
		n := d.Root
		if f, ok := m.Get("input"); ok {
			n = f.Value
		}
		if typ, _ := t.Input["type"].(string); typ != "object" {
			l.Errorf(d.NodePos(n), "input must be a JSON Schema with type: object (the model passes named arguments)")
		} else {
			t.InputSchema = sc.compileAt("input", t.Input, d, n, d.NodePos(n), l)
		}
	}
	if f, ok := m.Get("output"); ok {
		if t.Output = schemaObject(d, f.Value, "output", l); t.Output != nil {
			sc.compileAt("output", t.Output, d, f.Value, d.NodePos(f.Value), l)
		}
	}
	if f, ok := m.Get("steps"); !ok {
		l.Errorf(t.Pos, "tool %q needs steps", t.Name)
	} else if f.Value.Kind != yaml.SequenceNode || len(f.Value.Content) == 0 {
		l.Errorf(d.NodePos(f.Value), "steps must be a non-empty list of steps")
	} else if len(f.Value.Content) > MaxSteps {
		l.Errorf(d.NodePos(f.Value), "more than %d steps", MaxSteps)
	} else {
		t.Steps = f.Value
	}
	if f, ok := m.Get("limits"); ok {
		t.Limits = f.Value
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

// crossCheck checks references between parts: data sources and commands name
// tools of the document, widgets name templates and data sources, settings
// name preferences, translations and legacy maps name real tools.
func crossCheck(p *Plugin, l *diag.List) {
	for _, ds := range p.DataSources {
		t := p.Tool(ds.Tool)
		switch {
		case t == nil:
			l.Errorf(ds.Pos, "data source %q names tool %q, which the document does not define", ds.Name, ds.Tool)
		case t.Effect != Read:
			l.Errorf(ds.Pos, "data source %q names tool %q, whose effect is %s: data sources read only", ds.Name, ds.Tool, t.Effect)
		case t.UserOnly:
			l.Errorf(ds.Pos, "data source %q names a userOnly tool", ds.Name)
		case t.InputSchema != nil:
			in := ds.Input
			if in == nil {
				in = map[string]any{}
			}
			if err := CheckInputBounds(t.InputSchema, in); err != nil {
				l.Errorf(ds.Pos, "data source %q, tool %q: %v", ds.Name, ds.Tool, err)
			} else if err := t.InputSchema.Validate(in); err != nil {
				l.Errorf(ds.Pos, "data source %q: its input does not fit tool %q: %s", ds.Name, ds.Tool, SchemaMessage(err))
			}
		}
	}
	for _, c := range p.Contributes.Commands {
		t := p.Tool(c.Tool)
		if t == nil {
			l.Errorf(c.Pos, "command %q names tool %q, which the document does not define", c.Key, c.Tool)
			continue
		}
		if t.InputSchema != nil {
			in := c.Input
			if in == nil {
				in = map[string]any{}
			}
			if err := CheckInputBounds(t.InputSchema, in); err != nil {
				l.Errorf(c.Pos, "command %q, tool %q: %v", c.Key, c.Tool, err)
			} else if err := t.InputSchema.Validate(in); err != nil {
				l.Errorf(c.Pos, "command %q: its input does not fit tool %q: %s", c.Key, c.Tool, SchemaMessage(err))
			}
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
		if r.Tool != "" && p.Tool(r.Tool) == nil {
			l.Errorf(r.Pos, "settings row %q names tool %q, which the document does not define", r.Key, r.Tool)
		}
	}
	for lang, tr := range p.I18n {
		for name := range tr.Tools {
			if p.Tool(name) == nil {
				l.Errorf(p.KeyPos["i18n"], "i18n.%s.tools names %q, which the document does not define", lang, name)
			}
		}
	}
	for old, cur := range p.Legacy.Tools {
		if p.Tool(cur) == nil {
			l.Errorf(p.KeyPos["legacy"], "legacy.tools maps %q to %q, which the document does not define", old, cur)
		}
	}
	if len(p.Tools) == 0 && p.ID != "" {
		l.Warnf(p.Pos, "the document defines no tools")
	}
}
