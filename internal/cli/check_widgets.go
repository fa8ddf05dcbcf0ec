package cli

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/steps"
	"go.yaml.in/yaml/v3"
)

// The widget check: every widget template (widgets/NAME.json, a "json
// widget NAME" block) is read in the generative-UI format of
// docs/plugin-format.md ("Widgets"): its element type and keys are known,
// each text is a ${ } template whose jq compiles, and the value of each key
// has the type the key takes. Problems are FILE:LINE:COL, inside the JSON.
func init() { documentChecks = append(documentChecks, checkWidgets) }

// widgetKey is one key of an element: a text template, the one-${ } list
// of a list's items, the item element, or a whole number.
type widgetKey int

const (
	wText widgetKey = iota
	wList
	wItem
	wCount
)

// widgetTypes are the elements and their keys (type is every element's).
var widgetTypes = map[string]map[string]widgetKey{
	"card": {"title": wText, "subtitle": wText, "value": wText, "badge": wText, "footnote": wText},
	"list": {"title": wText, "subtitle": wText, "items": wList, "item": wItem, "empty": wText, "max": wCount},
}

// widgetItemKeys are the keys of a list's item: templates run on each item.
var widgetItemKeys = map[string]widgetKey{"title": wText, "subtitle": wText, "value": wText, "badge": wText}

// widgetRequired are the keys each element must have.
var widgetRequired = map[string][]string{"card": {"title"}, "list": {"items", "item"}}

func checkWidgets(p *manifest.Plugin) diag.List {
	var l diag.List
	if p == nil {
		return l
	}
	names := make([]string, 0, len(p.Widgets))
	for name := range p.Widgets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		checkWidget(p, name, p.Widgets[name], &l)
	}
	return l
}

// widgetSource finds where a widget's text is: its own file, else its
// fenced block in PLUGIN.md (the lines after the info string, shifted by
// the fence's indentation).
func widgetSource(p *manifest.Plugin, name string, text []byte) (file string, first int, lines []yamlx.LineMap) {
	for _, ext := range []string{".json"} {
		f := "widgets/" + name + ext
		if b, ok := p.Files[f]; ok && string(b) == string(text) {
			return f, 1, nil
		}
	}
	doc := string(p.Files[fetch.DocumentName])
	info := regexp.MustCompile("(?m)^([ \t>*+\\-0-9.]*)(```+|~~~+)[ \t]*json[ \t]+widget[ \t]+" + regexp.QuoteMeta(name) + "[ \t]*\r?$")
	m := info.FindStringSubmatchIndex(doc)
	if m == nil {
		return fetch.DocumentName, 1, nil
	}
	line := strings.Count(doc[:m[0]], "\n") + 1
	indent := len([]rune(doc[m[2]:m[3]]))
	n := strings.Count(string(text), "\n") + 1
	for i := 0; i < n; i++ {
		lines = append(lines, yamlx.LineMap{Line: line + 1 + i, Col: indent})
	}
	return fetch.DocumentName, line + 1, lines
}

func checkWidget(p *manifest.Plugin, name string, text []byte, l *diag.List) {
	file, first, lines := widgetSource(p, name, text)
	// JSON is YAML's flow style: the strict parser gives every value its
	// position (the manifest has checked that the text is JSON).
	d := yamlx.Parse(file, text, first, lines, yamlx.Limits{MaxBytes: manifest.MaxWidgetBytes, MaxKeys: 20000, MaxDepth: 64}, l)
	if d.Root == nil {
		return
	}
	lim := steps.DefaultLimits()
	c := &steps.Compiler{Doc: d, L: l, Scope: steps.NewScope(), Limits: &lim, Plugin: p}
	checkElement(c, d, d.Root, "widget "+name, l)
}

// checkElement checks one element: its type, its keys and their values.
func checkElement(c *steps.Compiler, d *yamlx.Doc, n *yaml.Node, what string, l *diag.List) {
	if n.Kind != yaml.MappingNode {
		l.Errorf(d.NodePos(n), "%s must be a JSON object with a \"type\" (%s)", what, typeNames())
		return
	}
	var typ string
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Value == "type" {
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
				l.Errorf(d.NodePos(v), "%s: type must be a string: %s", what, typeNames())
				return
			}
			typ = v.Value
			if _, ok := widgetTypes[typ]; !ok {
				// A warning, not an error: widget files of documents written
				// before the format was documented must keep installing. Their
				// templates are still compiled.
				msg := fmt.Sprintf("%s: unknown element type %q (known: %s)", what, typ, typeNames())
				if s := yamlx.Suggest(typ, typeList()); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
				}
				l.Warnf(d.NodePos(v), "%s", msg)
				compileTemplates(c, n, what)
				return
			}
		}
	}
	if typ == "" {
		l.Errorf(d.NodePos(n), "%s has no \"type\" (%s)", what, typeNames())
		return
	}
	checkKeys(c, d, n, what+" ("+typ+")", widgetTypes[typ], widgetRequired[typ], true, l)
}

// compileTemplates compiles every string under n that holds a ${ }
// template, for an element whose type the format does not know.
func compileTemplates(c *steps.Compiler, n *yaml.Node, what string) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!str" && strings.Contains(n.Value, "${") {
			c.CompileTemplate(n, what, steps.Text)
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			compileTemplates(c, n.Content[i], what+" "+n.Content[i-1].Value)
		}
	case yaml.SequenceNode:
		for _, e := range n.Content {
			compileTemplates(c, e, what)
		}
	}
}

// checkKeys checks a mapping's keys against keys, and each value's type.
func checkKeys(c *steps.Compiler, d *yamlx.Doc, n *yaml.Node, what string, keys map[string]widgetKey, required []string, typed bool, l *diag.List) {
	known := make([]string, 0, len(keys))
	for k := range keys {
		known = append(known, k)
	}
	sort.Strings(known)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		seen[k.Value] = true
		if typed && k.Value == "type" {
			continue
		}
		kind, ok := keys[k.Value]
		if !ok {
			msg := fmt.Sprintf("%s: unknown key %q (known: %s)", what, k.Value, strings.Join(known, ", "))
			if s := yamlx.Suggest(k.Value, known); s != "" {
				msg = fmt.Sprintf("%s: unknown key %q (did you mean %q?)", what, k.Value, s)
			}
			l.Errorf(d.NodePos(k), "%s", msg)
			continue
		}
		at := what + " " + k.Value
		switch kind {
		case wText:
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
				l.Errorf(d.NodePos(v), "%s must be a string (a text, with ${ } templates)", at)
				continue
			}
			c.CompileTemplate(v, at, steps.Text)
		case wList:
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
				l.Errorf(d.NodePos(v), "%s must be one ${ JQ } giving the list of items, e.g. \"${ .rooms }\"", at)
				continue
			}
			t := c.CompileTemplate(v, at, steps.Text)
			if t != nil && t.Single() == nil {
				l.Errorf(d.NodePos(v), "%s must be exactly one ${ JQ } giving the list of items, with no text around it", at)
			}
		case wItem:
			if v.Kind != yaml.MappingNode {
				l.Errorf(d.NodePos(v), "%s must be a JSON object of texts (%s), each run on one item", at, strings.Join(sortedKeys(widgetItemKeys), ", "))
				continue
			}
			checkKeys(c, d, v, at, widgetItemKeys, nil, false, l)
		case wCount:
			if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || strings.HasPrefix(v.Value, "-") || v.Value == "0" {
				l.Errorf(d.NodePos(v), "%s must be a whole number above 0", at)
			}
		}
	}
	for _, r := range required {
		if !seen[r] {
			l.Errorf(d.NodePos(n), "%s needs %q", what, r)
		}
	}
}

func typeList() []string { return sortedKeys(widgetTypes) }

func typeNames() string { return strings.Join(typeList(), " or ") }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
