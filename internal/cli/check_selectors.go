package cli

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/pkuinfo/harness/steps"
	"go.yaml.in/yaml/v3"
	"golang.org/x/net/html/charset"
)

// The selector check: an html or xml step's selectors are run over the
// text responses recorded in the document's test cases for its tool. A
// select that matches no element in any of them, or a field that is null
// in every element it selected (a selector that never matches inside, a
// misspelled attribute), is warned about: the run would give [] or null
// with exit 0, and nothing else says so.
func init() { validChecks = append(validChecks, checkSelectors) }

// selectorProbeTime bounds the probing of one document.
const selectorProbeTime = 5 * time.Second

func checkSelectors(p *manifest.Plugin) diag.List {
	var l diag.List
	if p == nil || len(p.Tests) == 0 {
		return l
	}
	suite, sl := plugintest.Parse(p)
	if suite == nil || sl.HasErrors() {
		return l
	}
	bodies := map[string][]string{} // tool -> recorded text bodies
	for _, c := range suite.Cases() {
		for _, x := range c.Exchanges {
			if text, ok := recordedText(x.Resp); ok {
				bodies[c.Tool] = append(bodies[c.Tool], text)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), selectorProbeTime)
	defer cancel()
	for _, t := range p.Tools {
		if len(bodies[t.Name]) == 0 || t.Steps == nil || t.Doc == nil {
			continue
		}
		names := boundNames(t.Steps)
		walkExtracts(t.Steps, func(kind string, m *yaml.Node) {
			probeExtract(ctx, p, t, kind, m, names, bodies[t.Name], &l)
		})
	}
	return l
}

// recordedText is a recorded body as the steps see it: decoded to UTF-8
// from its charset (declared, or sniffed as the proxy does).
func recordedText(r plugintest.Response) (string, bool) {
	b := r.Body
	if len(b) == 0 {
		return "", false
	}
	ct := r.Header.Get("Content-Type")
	lct := strings.ToLower(ct)
	declared := strings.Contains(lct, "charset=") && !strings.Contains(lct, "charset=utf-8")
	if declared || !utf8.Valid(b) {
		enc, _, _ := charset.DetermineEncoding(b, ct)
		if enc != nil {
			if d, err := enc.NewDecoder().Bytes(b); err == nil {
				b = d
			}
		}
	}
	if !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// walkExtracts calls fn for each html and xml step's mapping, nested
// steps (foreach) included.
func walkExtracts(list *yaml.Node, fn func(kind string, m *yaml.Node)) {
	if list == nil || list.Kind != yaml.SequenceNode {
		return
	}
	for _, st := range list.Content {
		for _, kind := range []string{"html", "xml"} {
			if m := yamlx.Lookup(st, kind); m != nil && m.Kind == yaml.MappingNode {
				fn(kind, m)
			}
		}
		if fe := yamlx.Lookup(st, "foreach"); fe != nil {
			walkExtracts(yamlx.Lookup(fe, "steps"), fn)
		}
	}
}

// boundNames are every name the tool's steps bind, so that a probe's
// compiled step sees the variables its own jq may name.
func boundNames(list *yaml.Node) []string {
	names := []string{"input", "prefs", "item", "cursor"}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || n.Kind != yaml.SequenceNode {
			return
		}
		for _, st := range n.Content {
			if as := yamlx.Lookup(st, "as"); as != nil && as.Kind == yaml.ScalarNode {
				names = append(names, as.Value)
			}
			if fe := yamlx.Lookup(st, "foreach"); fe != nil {
				if it := yamlx.Lookup(fe, "item"); it != nil {
					names = append(names, it.Value)
				}
				walk(yamlx.Lookup(fe, "steps"))
			}
		}
	}
	walk(list)
	return names
}

// probeExtract runs one extraction step, as its kind and selectors are
// written, over each recorded body, and warns for what never matched. A
// step whose text is not a response's body (a from other than .body or
// $NAME.body) is not probed: its text is not recorded as it is.
func probeExtract(ctx context.Context, p *manifest.Plugin, t *manifest.Tool, kind string, m *yaml.Node, names []string, bodies []string, l *diag.List) {
	if from := yamlx.Lookup(m, "from"); from != nil {
		f := strings.TrimSpace(from.Value)
		if from.Kind != yaml.ScalarNode || !strings.HasSuffix(f, ".body") || strings.ContainsAny(f, " |()[]") {
			return
		}
	}
	sel := yamlx.Lookup(m, "select")
	if sel == nil {
		return
	}
	// The step as the probe runs it: select and fields only (no from, no
	// min: the text comes as .body, and too few elements is what is
	// being measured).
	probe := &yaml.Node{Kind: yaml.MappingNode, Line: m.Line, Column: m.Column}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i].Value; k == "select" || k == "fields" {
			probe.Content = append(probe.Content, m.Content[i], m.Content[i+1])
		}
	}
	step := &yaml.Node{Kind: yaml.MappingNode, Line: m.Line, Column: m.Column,
		Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: kind}, probe}}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{step}, Line: m.Line, Column: m.Column}
	var cl diag.List
	lim := steps.DefaultLimits()
	c := &steps.Compiler{Doc: t.Doc, L: &cl, Scope: steps.NewScope(names...), Limits: &lim, Registry: steps.Builtin(), Plugin: p}
	block := c.Block(seq, "steps")
	if cl.HasErrors() || len(block) != 1 {
		return
	}
	fields := yamlx.Lookup(m, "fields")
	selected := 0
	hit := map[string]bool{}
	for _, body := range bodies {
		f := &steps.Frame{Dot: map[string]any{"body": body}, Vars: make([]any, c.Scope.Slots()), Limits: &lim}
		if err := block.Run(ctx, f); err != nil {
			continue // not a page of this kind (an error page, JSON)
		}
		out, _ := f.Dot.([]any)
		selected += len(out)
		for _, rec := range out {
			r, ok := rec.(map[string]any)
			if !ok {
				continue
			}
			for k, v := range r {
				if list, isList := v.([]any); v != nil && (!isList || len(list) > 0) {
					hit[k] = true
				}
			}
		}
	}
	what := "css selector"
	if kind == "xml" {
		what = "element path"
	}
	if selected == 0 {
		l.Warnf(t.Doc.NodePos(sel), "%s select %s %q matched no element in the %s recorded for tool %s's test cases: the step gives [] (check it against a recorded page)",
			kind, what, sel.Value, pluralize(len(bodies), "response"), t.Name)
		return
	}
	if fields == nil || fields.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(fields.Content); i += 2 {
		k, v := fields.Content[i], fields.Content[i+1]
		if hit[k.Value] {
			continue
		}
		how := yamlx.Describe(v)
		if v.Kind == yaml.ScalarNode {
			how = fmt.Sprintf("%q", v.Value)
		} else if s := yamlx.Lookup(v, "select"); s != nil {
			how = fmt.Sprintf("%q", s.Value)
			if a := yamlx.Lookup(v, "attr"); a != nil {
				how += fmt.Sprintf(" (attribute %s)", a.Value)
			}
		} else if a := yamlx.Lookup(v, "attr"); a != nil {
			how = fmt.Sprintf("attribute %s", a.Value)
		}
		l.Warnf(t.Doc.NodePos(k), "%s field %s (%s) is null in all %s that %q selected in tool %s's recorded responses: its selector or attribute never matched",
			kind, k.Value, how, pluralize(selected, "element"), sel.Value, t.Name)
	}
}
