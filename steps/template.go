package steps

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

// Escape says how a template escapes interpolated values.
type Escape int

// Escapes.
const (
	// Text inserts values as they are (strings raw, others as JSON).
	Text Escape = iota
	// Segment escapes each value so it stays inside one path segment: "/",
	// "?", "#", "%", "\" and dots are percent-encoded, an empty value is an
	// error. In a URL's query part values are query-escaped.
	Segment
)

// Template is a string with `${ JQ }` interpolations, compiled once. `$${`
// writes a literal "${".
type Template struct {
	Src    string
	parts  []tpart
	escape Escape
	lit    bool
}

type tpart struct {
	lit   string
	q     *JQ
	query bool // in a URL's query or fragment: query-escape
}

// CompileTemplate compiles the template held by scalar n (a bare number or
// boolean is its text as written).
func (c *Compiler) CompileTemplate(n *yaml.Node, what string, esc Escape) *Template {
	s, ok := c.Text(n, what, false)
	if !ok {
		return nil
	}
	return c.TemplateString(n, s, what, esc)
}

// TemplateString compiles s, the value of scalar n.
func (c *Compiler) TemplateString(n *yaml.Node, s, what string, esc Escape) *Template {
	t := &Template{Src: s, escape: esc}
	var lit strings.Builder
	inQuery := false
	good := true
	litStart := 0 // where the literal run in lit starts in s
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			lit.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			if s[i] == '?' || s[i] == '#' {
				inQuery = true
			}
			lit.WriteByte(s[i])
			i++
			continue
		}
		end := closeBrace(s, i+2)
		if end < 0 {
			c.L.Errorf(c.at(n, 0)(i), "%s: ${ is not closed by a matching }", what)
			return nil
		}
		if lit.Len() > 0 {
			if s == n.Value {
				c.warnBareVars(n, s[litStart:i], litStart, what)
			}
			t.parts = append(t.parts, tpart{lit: lit.String()})
			lit.Reset()
		}
		start := i + 2
		q := compileJQ(s[start:end], c.Scope, c.Limits, c.at(n, start), c.L)
		if q == nil {
			good = false
		}
		t.parts = append(t.parts, tpart{q: q, query: inQuery})
		i = end + 1
		litStart = i
	}
	if lit.Len() > 0 {
		if s == n.Value {
			c.warnBareVars(n, s[litStart:], litStart, what)
		}
		t.parts = append(t.parts, tpart{lit: lit.String()})
	}
	if !good {
		return nil
	}
	t.lit = len(t.parts) == 0 || len(t.parts) == 1 && t.parts[0].q == nil
	return t
}

// Literal reports whether the template has no interpolation, and its text.
func (t *Template) Literal() (string, bool) {
	if !t.lit {
		return "", false
	}
	if len(t.parts) == 0 {
		return "", true
	}
	return t.parts[0].lit, true
}

// Prefix is the literal text before the first interpolation.
func (t *Template) Prefix() string {
	if len(t.parts) > 0 && t.parts[0].q == nil {
		return t.parts[0].lit
	}
	return ""
}

// Single returns the program when the template is exactly one `${ JQ }`,
// whose value then keeps its JSON type where a value is wanted.
func (t *Template) Single() *JQ {
	if len(t.parts) == 1 && t.parts[0].q != nil {
		return t.parts[0].q
	}
	return nil
}

// closeBrace finds the } that closes a ${ opened before i, skipping jq
// strings and nested braces.
func closeBrace(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// Render evaluates the template on v.
func (t *Template) Render(ctx context.Context, f *Frame, v any) (string, error) {
	if t.lit {
		s, _ := t.Literal()
		return s, nil
	}
	// One buffer for the literal parts and a short value for each ${ }.
	n := 0
	for _, p := range t.parts {
		n += len(p.lit) + 24
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range t.parts {
		if p.q == nil {
			b.WriteString(p.lit)
			continue
		}
		x, err := p.q.First(ctx, f, v)
		if err != nil {
			return "", fmt.Errorf("in ${ %s }: %w", strings.TrimSpace(p.q.Src), err)
		}
		s, err := textOf(x, f.Limits.Depth, f.Limits.StringBytes)
		if err != nil {
			return "", err
		}
		if t.escape == Segment {
			if s == "" {
				return "", fmt.Errorf("${ %s } is empty, which would leave an empty path segment", strings.TrimSpace(p.q.Src))
			}
			if p.query {
				s = url.QueryEscape(s)
			} else {
				s = EscapeSegment(s)
			}
		}
		b.WriteString(s)
		if b.Len() > f.Limits.StringBytes {
			return "", &LimitError{Limit: "string", Max: int64(f.Limits.StringBytes), What: "a template's text"}
		}
	}
	return b.String(), nil
}

// textOf renders a value as text: strings as they are, others as JSON of
// at most max bytes.
func textOf(x any, depth, max int) (string, error) {
	switch x := x.(type) {
	case string:
		return x, nil
	case nil:
		return "null", nil
	}
	b, err := EncodeWithin(x, depth, max)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// EscapeSegment escapes s so that it stays one path segment whatever it
// holds: url.PathEscape plus dots, so "." and ".." cannot walk the path.
func EscapeSegment(s string) string {
	e := url.PathEscape(s)
	if strings.Contains(e, ".") {
		e = strings.ReplaceAll(e, ".", "%2E")
	}
	return e
}

// valueTemplate is a YAML value whose strings are templates; a string that
// is exactly one `${ JQ }` yields the program's value with its type.
type valueTemplate struct {
	static   any // the whole value when nothing in it interpolates
	isStatic bool
	str      *Template
	list     []*valueTemplate
	keys     []string
	vals     []*valueTemplate
	isMap    bool
}

// ValueTemplate compiles a value whose strings are templates.
func (c *Compiler) ValueTemplate(n *yaml.Node) *valueTemplate {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!str" || n.Tag == "" {
			t := c.TemplateString(n, n.Value, "value", Text)
			if t == nil {
				return nil
			}
			if s, ok := t.Literal(); ok {
				return &valueTemplate{static: s, isStatic: true}
			}
			return &valueTemplate{str: t}
		}
		v, ok := c.Doc.Value(n, c.L)
		if !ok {
			return nil
		}
		return &valueTemplate{static: FromGo(v), isStatic: true}
	case yaml.SequenceNode:
		vt := &valueTemplate{list: []*valueTemplate{}}
		static := true
		for _, e := range n.Content {
			x := c.ValueTemplate(e)
			if x == nil {
				return nil
			}
			static = static && x.isStatic
			vt.list = append(vt.list, x)
		}
		if static {
			out := make([]any, len(vt.list))
			for i, x := range vt.list {
				out[i] = x.static
			}
			return &valueTemplate{static: out, isStatic: true}
		}
		return vt
	case yaml.MappingNode:
		vt := &valueTemplate{isMap: true}
		static := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			x := c.ValueTemplate(n.Content[i+1])
			if x == nil {
				return nil
			}
			static = static && x.isStatic
			vt.keys = append(vt.keys, n.Content[i].Value)
			vt.vals = append(vt.vals, x)
		}
		if static {
			out := make(map[string]any, len(vt.keys))
			for i, k := range vt.keys {
				out[k] = vt.vals[i].static
			}
			return &valueTemplate{static: out, isStatic: true}
		}
		return vt
	}
	c.Errorf(n, "unexpected %s", yamlx.Describe(n))
	return nil
}

// Eval builds the value against v. Static parts are shared: callers must
// not change the result.
func (t *valueTemplate) Eval(ctx context.Context, f *Frame, v any) (any, error) {
	switch {
	case t.isStatic:
		return t.static, nil
	case t.str != nil:
		if q := t.str.Single(); q != nil {
			return q.First(ctx, f, v)
		}
		return t.str.Render(ctx, f, v)
	case t.isMap:
		out := make(map[string]any, len(t.keys))
		for i, k := range t.keys {
			x, err := t.vals[i].Eval(ctx, f, v)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	}
	out := make([]any, len(t.list))
	for i, e := range t.list {
		x, err := e.Eval(ctx, f, v)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}
