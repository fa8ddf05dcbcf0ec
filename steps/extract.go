package steps

import (
	"context"
	"fmt"

	"github.com/itchyny/gojq"
	"go.yaml.in/yaml/v3"
)

// Helpers shared by the extraction kinds (html, xml).

// fieldSpec is one extracted field: a selector (unset: the element
// itself), an attribute (unset: the text), and whether to list every match.
type fieldSpec[S any] struct {
	name string
	sel  S
	has  bool
	attr string
	all  bool
}

// decodeFields reads NAME: SELECTOR | {select, attr, all}.
func decodeFields[S any](c *Compiler, n *yaml.Node, compile func(*yaml.Node, string) (S, bool)) ([]fieldSpec[S], bool) {
	type fld = fieldSpec[S]
	m, ok := c.Doc.Mapping(n, "fields", nil, c.L)
	if !ok {
		return nil, false
	}
	var out []fld
	good := true
	for _, kv := range m.Fields {
		fd := fld{name: kv.Key}
		if kv.Value.Kind == yaml.ScalarNode {
			fd.sel, ok = compile(kv.Value, "fields."+kv.Key)
			fd.has = true
			good = good && ok
			out = append(out, fd)
			continue
		}
		mm, ok := c.Doc.Mapping(kv.Value, "fields."+kv.Key, []string{"select", "attr", "all"}, c.L)
		if !ok {
			good = false
			continue
		}
		if f, ok := mm.Get("select"); ok {
			fd.sel, ok = compile(f.Value, "fields."+kv.Key+".select")
			fd.has = true
			good = good && ok
		}
		if f, ok := mm.Get("attr"); ok {
			fd.attr, ok = c.Doc.String(f.Value, "attr", c.L)
			good = good && ok
		}
		if f, ok := mm.Get("all"); ok {
			fd.all, ok = c.Doc.Bool(f.Value, "all", c.L)
			good = good && ok
		}
		out = append(out, fd)
	}
	return out, good
}

func textFrom(ctx context.Context, f *Frame, from *JQ, def string) (string, error) {
	var v any
	var err error
	if from != nil {
		if v, err = from.First(ctx, f, f.Dot); err != nil {
			return "", fmt.Errorf("from: %w", err)
		}
	} else {
		m, ok := f.Dot.(map[string]any)
		if !ok {
			return "", fmt.Errorf("from: `.` is %s, not a response with a %s (set from)", gojq.TypeOf(f.Dot), def)
		}
		v = m[def]
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("from: expected a string, got %s", gojq.TypeOf(v))
	}
	return s, nil
}
