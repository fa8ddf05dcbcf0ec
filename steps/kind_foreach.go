package steps

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/itchyny/gojq"
	"go.yaml.in/yaml/v3"
)

var foreachSpec = Spec{
	Kind:    "foreach",
	Summary: "Run sub-steps once per element of a list, in order; the output is the list of each run's last output.",
	Fields: []Field{
		{Name: "in", Type: "jq", Required: true, Doc: "the list to walk (an array; an object walks its values)"},
		{Name: "item", Type: "name", Default: "item", Doc: "the variable holding the element inside the sub-steps ($item); `.` starts as the element too"},
		{Name: "max", Type: "int", Doc: "at most this many elements, else the step fails (default and ceiling: the iterations limit)"},
		{Name: "steps", Type: "steps", Required: true, Doc: "the sub-steps; names they bind with as are visible only inside"},
	},
	Example: `- jq: '[1, 2, 3]'
- foreach:
    in: .
    steps:
      - jq: '$item * 10'`,
	Caps: Caps{Nests: true},
}

func init() { builtin.mustRegister(foreachSpec, decodeForeach) }

type foreachStep struct {
	in    *JQ
	slot  int
	max   int
	steps Block
}

func decodeForeach(c *Compiler, n *yaml.Node) Step {
	m, ok := c.Fields(n, &foreachSpec)
	if !ok {
		return nil
	}
	s := &foreachStep{max: c.Limits.Iterations}
	f, _ := m.Get("in")
	s.in = c.CompileJQ(f.Value, "in")
	item := "item"
	if f, ok := m.Get("item"); ok {
		if item, ok = c.Doc.String(f.Value, "item", c.L); !ok {
			return nil
		}
		if !nameRE.MatchString(item) || reservedNames[item] {
			c.Errorf(f.Value, "item: %q is not a usable variable name", item)
			return nil
		}
	}
	if f, ok := m.Get("max"); ok {
		if s.max, ok = c.Int(f.Value, "max", c.Limits.Iterations); !ok {
			return nil
		}
	}
	f, _ = m.Get("steps")
	var slots []int
	s.steps, slots = c.Nested(f.Value, "foreach.steps", item)
	s.slot = slots[0]
	if s.in == nil || s.steps == nil {
		return nil
	}
	return s
}

func (s *foreachStep) Run(ctx context.Context, f *Frame) (any, error) {
	list, err := s.in.First(ctx, f, f.Dot)
	if err != nil {
		return nil, err
	}
	var items []any
	switch l := list.(type) {
	case nil:
	case []any:
		items = l
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(l)) {
			items = append(items, l[k])
		}
	default:
		return nil, fmt.Errorf("in: expected a list, got %s", gojq.TypeOf(list))
	}
	if len(items) > s.max {
		return nil, &LimitError{Limit: "iterations", Max: int64(s.max), What: fmt.Sprintf("a list of %d elements", len(items))}
	}
	out := make([]any, 0, len(items))
	saved := f.Vars[s.slot]
	for _, it := range items {
		f.Vars[s.slot] = it
		f.Dot = it
		if err := s.steps.Run(ctx, f); err != nil {
			return nil, err
		}
		if f.ended {
			return nil, nil
		}
		out = append(out, f.Dot)
	}
	f.Vars[s.slot] = saved
	return out, nil
}

var _ Step = (*foreachStep)(nil)
