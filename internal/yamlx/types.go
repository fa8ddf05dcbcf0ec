package yamlx

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The declared types every surface shares. A surface adds its own (a jq
// program, a template) by implementing Type.

// String is a string scalar (numbers and booleans written bare are refused:
// quote them). MaxLen counts characters, as JSON Schema's maxLength does;
// Pattern, when set, must match the whole value, and Hint says in words what
// it accepts; Not lists reserved values.
type String struct {
	MinLen, MaxLen int
	Pattern        *regexp.Regexp
	Hint           string // "a variable name ([A-Za-z_][A-Za-z0-9_]*)"
	// Rule, when set, words instead the refusal of a value too long or not
	// matching Pattern: `KEY "VALUE" Rule` ("must match [a-z]+").
	Rule  string
	Not   []string
	Label string // the reference's name for it (default "string")
}

func (t String) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	s, ok := c.Doc.String(n, what, c.L)
	if !ok {
		return nil, false
	}
	return s, t.Check(c, n, what, s)
}

// Check applies the bounds, pattern and reserved values to s.
func (t String) Check(c *Ctx, n *yaml.Node, what, s string) bool {
	chars := utf8.RuneCountInString(s)
	switch {
	case t.MinLen > 0 && chars < t.MinLen:
		if t.MinLen == 1 {
			c.Errorf(n, "%s must not be empty", what)
		} else {
			c.Errorf(n, "%s must have at least %d characters", what, t.MinLen)
		}
		return false
	case t.Rule != "" && (t.MaxLen > 0 && chars > t.MaxLen || t.Pattern != nil && !t.Pattern.MatchString(s)):
		c.Errorf(n, "%s %q %s", what, s, t.Rule)
		return false
	case t.MaxLen > 0 && chars > t.MaxLen:
		c.Errorf(n, "%s is longer than %d characters", what, t.MaxLen)
		return false
	case t.Pattern != nil && !t.Pattern.MatchString(s):
		hint := t.Hint
		if hint == "" {
			hint = "text matching " + t.Pattern.String()
		}
		c.Errorf(n, "%s: %q is not %s", what, s, hint)
		return false
	case slices.Contains(t.Not, s):
		c.Errorf(n, "%s: %q is reserved", what, s)
		return false
	}
	return true
}

func (t String) Schema(*Gen) map[string]any {
	out := map[string]any{"type": "string"}
	if t.MinLen > 0 {
		out["minLength"] = t.MinLen
	}
	if t.MaxLen > 0 {
		out["maxLength"] = t.MaxLen
	}
	if t.Pattern != nil {
		out["pattern"] = t.Pattern.String()
	}
	if len(t.Not) > 0 {
		out["not"] = map[string]any{"enum": anys(t.Not)}
	}
	return out
}

func (t String) Name() string {
	if t.Label != "" {
		return t.Label
	}
	return "string"
}

// Int is an integer scalar at least Min and, when Max is not 0, at most Max.
// Hint, when set, names the range in words: "status 99 is not an HTTP
// status".
type Int struct {
	Min, Max int64
	Hint     string
}

func (t Int) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	v, ok := c.Doc.Int(n, what, c.L)
	if !ok {
		return nil, false
	}
	if v < t.Min || t.Max != 0 && v > t.Max {
		if t.Hint != "" {
			c.Errorf(n, "%s %d is not %s", what, v, t.Hint)
		} else if t.Max != 0 {
			c.Errorf(n, "%s must be between %d and %d", what, t.Min, t.Max)
		} else {
			c.Errorf(n, "%s must be at least %d", what, t.Min)
		}
		return nil, false
	}
	return v, true
}

func (t Int) Schema(*Gen) map[string]any {
	out := map[string]any{"type": "integer"}
	if t.Min != math.MinInt64 {
		out["minimum"] = t.Min
	}
	if t.Max != 0 {
		out["maximum"] = t.Max
	}
	return out
}

func (t Int) Name() string {
	if t.Max != 0 {
		return fmt.Sprintf("integer %d to %d", t.Min, t.Max)
	}
	return "integer"
}

// Bool is true or false.
type Bool struct{}

func (Bool) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) { return c.Doc.Bool(n, what, c.L) }
func (Bool) Schema(*Gen) map[string]any                           { return map[string]any{"type": "boolean"} }
func (Bool) Name() string                                         { return "boolean" }

// Enum is one of a few strings; with Fold, any case is read as the declared
// spelling (the JSON Schema then lists the declared spelling only). Rule,
// when set, words the refusal (`KEY "VALUE" Rule`, with a "did you mean"
// when a value is close); Old maps old spellings to values, read with a
// warning that names the new one (the schema still takes them).
type Enum struct {
	Values []string
	Fold   bool
	Rule   string // "must be read, write, money or public"
	Old    map[string]string
}

func (t Enum) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	s, ok := c.Doc.String(n, what, c.L)
	if !ok {
		return nil, false
	}
	for _, v := range t.Values {
		if v == s || t.Fold && strings.EqualFold(v, s) {
			return v, true
		}
	}
	if nw, old := t.Old[s]; old {
		c.L.Warnf(c.Doc.NodePos(n), "%s %q is the old spelling of %q: write %s: %s", what, s, nw, what, nw)
		return nw, true
	}
	if t.Rule != "" {
		c.Errorf(n, "%s %q %s%s", what, s, t.Rule, DidYouMean(s, t.Values))
	} else {
		c.Errorf(n, "%s %q must be one of %s", what, s, strings.Join(t.Values, ", "))
	}
	return nil, false
}

func (t Enum) Schema(*Gen) map[string]any {
	return map[string]any{"enum": anys(append(slices.Clone(t.Values), slices.Sorted(maps.Keys(t.Old))...))}
}
func (t Enum) Name() string { return strings.Join(t.Values, "|") }

// Duration is a positive duration such as 500ms or 10s, at most Max when Max
// is set; it decodes to a time.Duration.
type Duration struct{ Max time.Duration }

// DurationPattern is what time.ParseDuration reads, without a sign.
const DurationPattern = `^([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))*$`

func (t Duration) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	s, ok := c.Doc.String(n, what, c.L)
	if !ok {
		return nil, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		c.Errorf(n, "%s: %q is not a duration such as 500ms or 10s", what, s)
		return nil, false
	}
	if t.Max > 0 && d > t.Max {
		c.Errorf(n, "%s must be at most %s", what, t.Max)
		return nil, false
	}
	return d, true
}

func (Duration) Schema(*Gen) map[string]any {
	return map[string]any{"type": "string", "pattern": DurationPattern}
}
func (Duration) Name() string { return "duration" }

// List is a sequence of Of with at least Min and (Max not 0) at most Max
// items; it decodes to []any. Items, when set, names the items in its
// messages ("test cases": "cases must be a list of test cases, not a
// mapping"); Empty, when set, is what an empty list is told instead of the
// Min message ("lists no assertion: it would assert nothing").
type List struct {
	Of           Type
	Min, Max     int
	Items, Empty string
}

func (t List) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	items := "items"
	if t.Items != "" {
		items = t.Items
	}
	switch {
	case n == nil || n.Kind != yaml.SequenceNode:
		of := ""
		if t.Items != "" {
			of = " of " + t.Items
		}
		c.Errorf(n, "%s must be a list%s, not %s", what, of, Describe(n))
		return nil, false
	case len(n.Content) == 0 && t.Min > 0 && t.Empty != "":
		c.Errorf(n, "%s %s", what, t.Empty)
		return nil, false
	case len(n.Content) == 0 && t.Min == 1:
		c.Errorf(n, "%s must not be an empty list", what)
		return nil, false
	case len(n.Content) < t.Min:
		c.Errorf(n, "%s must hold at least %d %s", what, t.Min, items)
		return nil, false
	case t.Max > 0 && len(n.Content) > t.Max:
		c.Errorf(n, "%s holds more than %d %s", what, t.Max, items)
		return nil, false
	}
	out := make([]any, 0, len(n.Content))
	ok := true
	for _, e := range n.Content {
		v, good := t.Of.Decode(c, e, what+" item")
		ok = ok && good
		out = append(out, v)
	}
	return out, ok
}

func (t List) Schema(g *Gen) map[string]any {
	out := map[string]any{"type": "array", "items": t.Of.Schema(g)}
	if t.Min > 0 {
		out["minItems"] = t.Min
	}
	if t.Max > 0 {
		out["maxItems"] = t.Max
	}
	return out
}
func (t List) Name() string     { return "list of " + t.Of.Name() }
func (t List) Decls() []*Decl   { return declsOf(t.Of) }
func (t MapOf) Decls() []*Decl  { return declsOf(t.Of) }
func (t Object) Decls() []*Decl { return []*Decl{t.Decl} }

// MapOf is a mapping of names (Key, when set, must match them) to values of
// Of, at most Max keys when Max is set; it decodes to []Entry in source
// order.
type MapOf struct {
	Of      Type
	Key     *regexp.Regexp
	KeyHint string
	Max     int
}

func (t MapOf) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	m, ok := c.Doc.Mapping(n, what, nil, c.L)
	if !ok {
		return nil, false
	}
	if t.Max > 0 && len(m.Fields) > t.Max {
		c.Errorf(n, "%s holds more than %d keys", what, t.Max)
		return nil, false
	}
	out := make([]Entry, 0, len(m.Fields))
	for _, f := range m.Fields {
		if t.Key != nil && !t.Key.MatchString(f.Key) {
			hint := t.KeyHint
			if hint == "" {
				hint = "a name matching " + t.Key.String()
			}
			c.Errorf(f.KeyN, "%s: key %q is not %s", what, f.Key, hint)
			ok = false
			continue
		}
		v, good := t.Of.Decode(c, f.Value, what+" value "+strconv.Quote(f.Key))
		ok = ok && good
		out = append(out, Entry{Key: f.Key, KeyN: f.KeyN, Node: f.Value, Value: v})
	}
	return out, ok
}

func (t MapOf) Schema(g *Gen) map[string]any {
	out := map[string]any{"type": "object", "additionalProperties": t.Of.Schema(g)}
	if t.Key != nil {
		out["propertyNames"] = map[string]any{"pattern": t.Key.String()}
	}
	if t.Max > 0 {
		out["maxProperties"] = t.Max
	}
	return out
}
func (t MapOf) Name() string { return "map of " + t.Of.Name() }

// Object is a mapping declared by Decl; it decodes to *Obj.
type Object struct{ Decl *Decl }

func (t Object) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	o, ok := c.Object(n, t.Decl)
	return o, ok
}
func (t Object) Schema(g *Gen) map[string]any { return g.Object(t.Decl) }
func (t Object) Name() string {
	return "{" + strings.Join(t.Decl.Keys(), ", ") + "}"
}

// Either is a scalar read with Scalar or a mapping (or list) read with
// Mapping, chosen by the node's kind.
type Either struct{ Scalar, Mapping Type }

func (t Either) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	if n != nil && n.Kind == yaml.ScalarNode {
		return t.Scalar.Decode(c, n, what)
	}
	return t.Mapping.Decode(c, n, what)
}
func (t Either) Schema(g *Gen) map[string]any {
	return map[string]any{"oneOf": []any{t.Scalar.Schema(g), t.Mapping.Schema(g)}}
}
func (t Either) Name() string   { return t.Scalar.Name() + " | " + t.Mapping.Name() }
func (t Either) Decls() []*Decl { return append(declsOf(t.Scalar), declsOf(t.Mapping)...) }

// Scalar is a string, number or boolean scalar, read as its text as written
// (a query value: text on the wire).
type Scalar struct{}

func (Scalar) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		c.Errorf(n, "%s must be a string, number or boolean, not %s", what, Describe(n))
		return nil, false
	}
	return n.Value, true
}
func (Scalar) Schema(*Gen) map[string]any {
	return map[string]any{"type": []any{"string", "number", "boolean"}}
}
func (Scalar) Name() string { return "string, number or boolean" }

// Any is any JSON value; it decodes to nil, bool, int64, float64, string,
// []any or map[string]any.
type Any struct{}

func (Any) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) { return c.Doc.Value(n, c.L) }
func (Any) Schema(*Gen) map[string]any                           { return map[string]any{} }
func (Any) Name() string                                         { return "value" }

// Later keeps a value's node for its owner to decode afterwards (with Of,
// once the owner has set up what it needs, e.g. a variable in scope): the
// decoder only checks that it is there. It decodes to *yaml.Node.
type Later struct{ Of Type }

func (t Later) Decode(c *Ctx, n *yaml.Node, what string) (any, bool) { return n, true }
func (t Later) Schema(g *Gen) map[string]any                         { return t.Of.Schema(g) }
func (t Later) Name() string                                         { return t.Of.Name() }
func (t Later) Decls() []*Decl                                       { return declsOf(t.Of) }

// Named gives a type another name in the reference tables ("path",
// "template"), keeping its decoding and schema.
type Named struct {
	Type
	Label string
}

func (t Named) Name() string   { return t.Label }
func (t Named) Decls() []*Decl { return declsOf(t.Type) }

// SchemaPlus is a type whose JSON Schema says more than its decoding checks
// (a pattern, uniqueItems), for rules its owner checks in code with its own
// words; Extra's keywords are added to the type's schema.
type SchemaPlus struct {
	Type
	Extra map[string]any
}

func (t SchemaPlus) Schema(g *Gen) map[string]any {
	out := t.Type.Schema(g)
	maps.Copy(out, t.Extra)
	return out
}
func (t SchemaPlus) Decls() []*Decl { return declsOf(t.Type) }

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
