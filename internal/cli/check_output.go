package cli

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"go.yaml.in/yaml/v3"
)

// The output-schema checks: where a tool declares an output schema, what
// the document itself says of the tool's result is checked against it.
//
//   - A widget fed by a data source of the tool: each text of its template
//     that reads a plain path of the data (${ .a.b }, ${ .a[0] // "?" }),
//     and a list's items, is followed through the schema; a path the schema
//     says the result never has (a property an object with
//     additionalProperties: false does not declare, a field of what is not
//     an object, an index of what is not an array) is an error at the text's
//     FILE:LINE:COL inside the JSON. Paths through anything the schema
//     leaves open (no type, anyOf, $ref, ...) are not judged.
//   - A test case of the tool whose expected output the schema refuses is
//     an error at the case.
//
// At run time the value itself is checked (registry.CheckOutput): a widget
// shows nothing that does not match.
func init() { documentChecks = append(documentChecks, checkOutputs) }

func checkOutputs(p *manifest.Plugin) diag.List {
	var l diag.List
	if p == nil {
		return l
	}
	tools := map[string]*manifest.Tool{}
	for _, t := range p.Tools {
		if t.Output != nil {
			if _, err := manifest.CompileSchema(t.Output); err == nil { // else the manifest said so
				tools[t.Name] = t
			}
		}
	}
	if len(tools) == 0 {
		return l
	}
	checkWidgetPaths(p, tools, &l)
	checkTestOutputs(p, tools, &l)
	return l
}

// checkWidgetPaths follows each widget's plain paths through the output
// schema of its data source's tool.
func checkWidgetPaths(p *manifest.Plugin, tools map[string]*manifest.Tool, l *diag.List) {
	sources := map[string]manifest.DataSource{}
	for _, ds := range p.DataSources {
		sources[ds.Name] = ds
	}
	done := map[string]bool{}
	for _, w := range p.Contributes.Widgets {
		ds, ok := sources[w.DataSource]
		if !ok {
			continue
		}
		t := tools[ds.Tool]
		name := w.Template
		if name == "" {
			name = w.Key
		}
		text, ok := p.Widgets[name]
		if t == nil || !ok || done[name+"\x00"+t.Name] {
			continue
		}
		done[name+"\x00"+t.Name] = true
		file, first, lines := widgetSource(p, name, text)
		var scratch diag.List // the template's own problems are checkWidgets'
		d := yamlx.Parse(file, text, first, lines, yamlx.Limits{MaxBytes: manifest.MaxWidgetBytes, MaxKeys: 20000, MaxDepth: 64}, &scratch)
		if d.Root == nil || d.Root.Kind != yaml.MappingNode {
			continue
		}
		wc := widgetPathCheck{d: d, l: l, tool: t, what: "widget " + name}
		wc.element(d.Root, t.Output)
	}
}

type widgetPathCheck struct {
	d    *yamlx.Doc
	l    *diag.List
	tool *manifest.Tool
	what string
}

// element checks one element's texts against s, the schema of its data.
func (c widgetPathCheck) element(n *yaml.Node, s map[string]any) {
	typ := ""
	if v := yamlx.Lookup(n, "type"); v != nil {
		typ = v.Value
	}
	keys, ok := widgetTypes[typ]
	if !ok {
		return
	}
	what := c.what + " (" + typ + ")"
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch keys[k.Value] {
		case wText:
			if k.Value != "type" {
				c.texts(v, s, what+" "+k.Value, "")
			}
		case wList:
			c.list(n, v, s, what)
		}
	}
}

// list checks a list's items path and its item's texts.
func (c widgetPathCheck) list(n, items *yaml.Node, s map[string]any, what string) {
	if items.Kind != yaml.ScalarNode {
		return
	}
	ps := templatePaths(items.Value)
	if len(ps) != 1 {
		return
	}
	at := what + " items"
	sub, why := followPath(s, ps[0], "the result")
	if why != "" {
		c.errorf(items, "%s reads %s", why, at, ps[0].src)
		return
	}
	var elem map[string]any
	if sub != nil && !open(sub) {
		types := schemaTypes(sub)
		switch {
		case len(types) > 0 && !types["array"] && !types["object"]:
			c.errorf(items, "%s reads %s", "makes it "+typeWords(types)+", not a list (an array, or an object whose values are listed)", at, ps[0].src)
			return
		case types["array"] && !types["object"]:
			elem, _ = sub["items"].(map[string]any)
		case types["object"] && !types["array"]:
			elem, _ = sub["additionalProperties"].(map[string]any)
		}
	}
	item := yamlx.Lookup(n, "item")
	if item == nil || item.Kind != yaml.MappingNode || elem == nil {
		return
	}
	for i := 0; i+1 < len(item.Content); i += 2 {
		k, v := item.Content[i], item.Content[i+1]
		if _, ok := widgetItemKeys[k.Value]; ok {
			c.texts(v, elem, what+" item "+k.Value, "each item of "+ps[0].src)
		}
	}
}

// texts checks the plain paths of one text against s, the schema of
// base ("" for the result).
func (c widgetPathCheck) texts(v *yaml.Node, s map[string]any, what, base string) {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		return
	}
	for _, p := range templatePaths(v.Value) {
		b := "the result"
		if base != "" {
			b = base
		}
		if _, why := followPath(s, p, b); why != "" {
			src := p.src
			if base != "" {
				src += " of " + base
			}
			c.errorf(v, "%s reads %s", why, what, src)
		}
	}
}

// errorf says that what (format, args) reads a path the output schema
// rules out, and why.
func (c widgetPathCheck) errorf(n *yaml.Node, format, why string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.l.Errorf(c.d.NodePos(n), "%s, but the output schema of tool %s (%s) %s", msg, c.tool.Name, c.tool.Pos, why)
}

// dataPath is a plain path of the data: its source text and its steps
// (a name, or "" for an index).
type dataPath struct {
	src   string
	steps []string
}

var (
	// placeholder finds ${ … } (not $${) up to the first }: a plain path
	// has none inside.
	placeholder = regexp.MustCompile(`(^|[^$])\$\{([^}]*)\}`)
	plainPath   = regexp.MustCompile(`^(\.[A-Za-z_][A-Za-z0-9_]*(\[[0-9]*\])*)+$|^\.$`)
	pathStep    = regexp.MustCompile(`\.([A-Za-z_][A-Za-z0-9_]*)|\[[0-9]*\]`)
)

// templatePaths are the plain paths a text's ${ } templates read: those
// whose jq is a path, alone or before a // alternative.
func templatePaths(text string) []dataPath {
	var out []dataPath
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		expr := strings.TrimSpace(m[2])
		if i := strings.Index(expr, "//"); i >= 0 {
			expr = strings.TrimSpace(expr[:i])
		}
		if !plainPath.MatchString(expr) || expr == "." {
			continue
		}
		p := dataPath{src: expr}
		for _, st := range pathStep.FindAllStringSubmatch(expr, -1) {
			p.steps = append(p.steps, st[1]) // "" for an index
		}
		out = append(out, p)
	}
	return out
}

// followPath follows p through the schema s of base ("the result"): the
// schema at its end (nil when the schema leaves it open), or why base can
// never have it.
func followPath(s map[string]any, p dataPath, base string) (map[string]any, string) {
	var at strings.Builder
	for _, step := range p.steps {
		if s == nil || open(s) {
			return nil, ""
		}
		types := schemaTypes(s)
		here := base
		if at.Len() > 0 {
			here = at.String()
		}
		if step == "" {
			if len(types) > 0 && !types["array"] {
				return nil, fmt.Sprintf("makes %s %s, not an array", here, typeWords(types))
			}
			at.WriteString("[]")
			s, _ = s["items"].(map[string]any)
			continue
		}
		if len(types) > 0 && !types["object"] {
			return nil, fmt.Sprintf("makes %s %s, not an object", here, typeWords(types))
		}
		at.WriteString("." + step)
		props, _ := s["properties"].(map[string]any)
		sub, ok := props[step]
		if !ok {
			if ap, set := s["additionalProperties"]; set && ap == false {
				return nil, fmt.Sprintf("gives %s no %q (it has: %s)", here, step, propNames(props))
			}
			return nil, ""
		}
		if sub == false {
			return nil, fmt.Sprintf("never lets %s be present", at.String())
		}
		s, _ = sub.(map[string]any)
	}
	return s, ""
}

// open reports whether a schema leaves its shape to keywords this check
// does not follow.
func open(s map[string]any) bool {
	for _, k := range []string{"$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "patternProperties", "dependentSchemas", "unevaluatedProperties", "prefixItems"} {
		if _, ok := s[k]; ok {
			return true
		}
	}
	return false
}

// schemaTypes are the types a schema allows ("integer" counts as number);
// empty when it does not say.
func schemaTypes(s map[string]any) map[string]bool {
	out := map[string]bool{}
	add := func(v any) {
		if t, ok := v.(string); ok {
			out[t] = true
			if t == "integer" {
				out["number"] = true
			}
		}
	}
	switch t := s["type"].(type) {
	case string:
		add(t)
	case []any:
		for _, x := range t {
			add(x)
		}
	}
	return out
}

func typeWords(types map[string]bool) string {
	var ts []string
	for t := range types {
		if t == "number" && types["integer"] {
			continue
		}
		ts = append(ts, t)
	}
	sort.Strings(ts)
	if len(ts) == 1 {
		return "a " + ts[0]
	}
	return "one of " + strings.Join(ts, ", ")
}

func propNames(props map[string]any) string {
	if len(props) == 0 {
		return "no properties"
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, strconv.Quote(k))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// checkTestOutputs checks each test case's expected output against its
// tool's output schema.
func checkTestOutputs(p *manifest.Plugin, tools map[string]*manifest.Tool, l *diag.List) {
	if len(p.Tests) == 0 {
		return
	}
	suite, _ := plugintest.Parse(p)
	if suite == nil {
		return
	}
	for _, c := range suite.Cases() {
		t := tools[c.Tool]
		if t == nil || !c.Expect.HasOutput {
			continue
		}
		s, err := manifest.CompileSchema(t.Output)
		if err != nil {
			continue
		}
		if err := s.Validate(c.Expect.Output); err != nil {
			l.Errorf(c.Pos, "test case %q: the expected output does not match the output schema of tool %s (%s): %s", c.Name, t.Name, t.Pos, manifest.SchemaMessage(err))
		}
	}
}
