package yamlx

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/internal/diag"
	"go.yaml.in/yaml/v3"
)

// Pair is one key of a mapping with its nodes.
type Pair struct {
	Key   string
	KeyN  *yaml.Node
	Value *yaml.Node
}

// Map is a mapping's fields in source order, with lookup by key.
type Map struct {
	Node   *yaml.Node
	Fields []Pair
	index  map[string]int
}

// Get returns the field with key k.
func (m *Map) Get(k string) (Pair, bool) {
	if m == nil {
		return Pair{}, false
	}
	i, ok := m.index[k]
	if !ok {
		return Pair{}, false
	}
	return m.Fields[i], true
}

// Mapping reads n as a mapping. known, when not nil, lists the allowed keys:
// any other key is an error with a "did you mean" suggestion. what names the
// thing for messages ("the front matter", "a step").
func (d *Doc) Mapping(n *yaml.Node, what string, known []string, l *diag.List) (*Map, bool) {
	if n == nil || n.Kind != yaml.MappingNode {
		l.Errorf(d.NodePos(n), "%s must be a mapping, not %s", what, Describe(n))
		return nil, false
	}
	m := &Map{Node: n, index: make(map[string]int, len(n.Content)/2)}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := m.index[k.Value]; dup {
			continue // reported by the structural check
		}
		if known != nil && !slices.Contains(known, k.Value) {
			msg := "unknown key " + strconv.Quote(k.Value) + " in " + what
			if s := Suggest(k.Value, known); s != "" {
				msg += " (did you mean " + strconv.Quote(s) + "?)"
			}
			l.Errorf(d.NodePos(k), "%s", msg)
			continue
		}
		m.index[k.Value] = len(m.Fields)
		m.Fields = append(m.Fields, Pair{Key: k.Value, KeyN: k, Value: v})
	}
	return m, true
}

// Suggest returns the known word closest to s, if it is close enough.
func Suggest(s string, known []string) string {
	best, bestD := "", 3
	ls := strings.ToLower(s)
	for _, k := range known {
		if strings.ToLower(k) == ls {
			return k
		}
		dd := levenshtein(ls, strings.ToLower(k), bestD)
		lim := 2
		if len(k) <= 4 {
			lim = 1
		}
		if dd <= lim && dd < bestD {
			best, bestD = k, dd
		}
	}
	return best
}

// DidYouMean is ` (did you mean "x"?)` for the known word closest to s
// (Suggest), or "" when none is close: the tail of a message about s.
func DidYouMean(s string, known []string) string {
	if sg := Suggest(s, known); sg != "" {
		return fmt.Sprintf(" (did you mean %q?)", sg)
	}
	return ""
}

// levenshtein computes the edit distance (swaps of neighbours count one),
// giving up past max.
func levenshtein(a, b string, max int) int {
	if len(a) > 64 || len(b) > 64 {
		return max + 1
	}
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	// Optimal string alignment: a swap of two neighbours costs 1.
	pp := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}

// String reads a scalar as a string. Numbers and booleans written without
// quotes are refused where a string is expected, except when loose is set
// (versions such as 1.0 are better quoted, but a bare 1.0.0 is a string).
func (d *Doc) String(n *yaml.Node, what string, l *diag.List) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.Errorf(d.NodePos(n), "%s must be a string, not %s", what, Describe(n))
		return "", false
	}
	if n.Tag != "!!str" && n.Tag != "" {
		l.Errorf(d.NodePos(n), "%s must be a string, not %s (quote it)", what, Describe(n))
		return "", false
	}
	return n.Value, true
}

// Bool reads a scalar as a boolean.
func (d *Doc) Bool(n *yaml.Node, what string, l *diag.List) (bool, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		l.Errorf(d.NodePos(n), "%s must be true or false, not %s", what, Describe(n))
		return false, false
	}
	return n.Value == "true", true
}

// Int reads a scalar as an integer.
func (d *Doc) Int(n *yaml.Node, what string, l *diag.List) (int64, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		l.Errorf(d.NodePos(n), "%s must be an integer, not %s", what, Describe(n))
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil {
		l.Errorf(d.NodePos(n), "%s: %q is not an integer in range", what, n.Value)
		return 0, false
	}
	return v, true
}

// Strings reads a list of strings; a single string is also accepted when one is set.
func (d *Doc) Strings(n *yaml.Node, what string, l *diag.List) ([]string, bool) {
	if n == nil || n.Kind != yaml.SequenceNode {
		l.Errorf(d.NodePos(n), "%s must be a list of strings, not %s", what, Describe(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for _, c := range n.Content {
		s, good := d.String(c, what+" item", l)
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// Value decodes a checked node into JSON-compatible data: nil, bool, int64,
// float64, string, []any, map[string]any.
func (d *Doc) Value(n *yaml.Node, l *diag.List) (any, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, true
		case "!!bool":
			return n.Value == "true", true
		case "!!int":
			if v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
				return v, true
			}
			f, err := strconv.ParseFloat(n.Value, 64)
			if err != nil {
				l.Errorf(d.NodePos(n), "%q is not a number", n.Value)
				return nil, false
			}
			return f, true
		case "!!float":
			f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				l.Errorf(d.NodePos(n), "%q is not a finite number (JSON has no Inf or NaN)", n.Value)
				return nil, false
			}
			return f, true
		}
		return n.Value, true
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		ok := true
		for _, c := range n.Content {
			v, good := d.Value(c, l)
			ok = ok && good
			out = append(out, v)
		}
		return out, ok
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, good := d.Value(n.Content[i+1], l)
			ok = ok && good
			out[n.Content[i].Value] = v
		}
		return out, ok
	}
	l.Errorf(d.NodePos(n), "unexpected %s", Describe(n))
	return nil, false
}
