package steps

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/itchyny/gojq"
	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

var foreachDecl = &yamlx.Decl{Name: "foreach", Fields: []yamlx.Field{
	{Name: "in", Type: JQType, Required: true, Doc: "the list to walk (an array; an object walks its values)"},
	{Name: "item", Type: NameType, Default: "item", Doc: "the variable holding the element inside the sub-steps ($item); `.` starts as the element too"},
	{Name: "max", Type: yamlx.Int{Min: 1}, Doc: "at most this many elements, else the step fails (default and ceiling: the iterations limit)"},
	{Name: "steps", Type: yamlx.Later{Of: StepsType}, Required: true, Doc: "the sub-steps; names they bind with as are visible only inside"},
}}

var foreachSpec = Spec{
	Kind:    "foreach",
	Summary: "Run sub-steps once per element of a list, in order; the output is the list of each run's last output.",
	Decl:    foreachDecl,
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
	m, good := c.Decode(n, foreachDecl)
	if m == nil {
		return nil
	}
	s := &foreachStep{max: c.Limits.Iterations}
	s.in, _ = m.Value("in").(*JQ)
	if v, ok := m.Get("max"); ok {
		s.max, good = c.Cap(v, "max", c.Limits.Iterations, good)
	}
	item := m.String("item")
	sn := m.NodeOf("steps")
	if item == "" || sn == nil {
		return nil
	}
	var slots []int
	c.Within(foreachDecl, func() { s.steps, slots = c.Nested(sn, "foreach.steps", item) })
	s.slot = slots[0]
	if !good || s.in == nil || s.steps == nil {
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
