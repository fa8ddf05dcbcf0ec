package steps

import (
	"context"
	"fmt"
	"time"

	"github.com/itchyny/gojq"
	"go.yaml.in/yaml/v3"
)

var paginateSpec = Spec{
	Kind: "paginate",
	Summary: "Repeat a request while a jq expression yields the next page's cursor, collecting items; stops at null, a repeated cursor, " +
		"maxPages, maxItems or the time budget (without error), and fails on the host's limits.",
	Fields: []Field{
		{Name: "request", Type: "request", Required: true, Doc: "the request, as the request kind; its templates see $cursor"},
		{Name: "start", Type: "jq", Default: "null", Doc: "the first cursor (on the step's input)"},
		{Name: "next", Type: "jq", Required: true, Doc: "on each response (the request's output, with $cursor): the next cursor; null, false or nothing stops"},
		{Name: "items", Type: "jq", Default: ".body", Doc: "on each response: the page's items (an array)"},
		{Name: "cursor", Type: "name", Default: "cursor", Doc: "the cursor's variable name"},
		{Name: "maxPages", Type: "int", Doc: "pages to fetch at most (default and ceiling: the pages limit)"},
		{Name: "maxItems", Type: "int", Doc: "items to collect at most (default and ceiling: the items limit)"},
		{Name: "budget", Type: "duration", Doc: "stop asking for more pages once this much time has passed"},
	},
	Example: `- paginate:
    request: { service: portal, path: /api/notices, query: { page: "${ $cursor }" } }
    start: '1'
    next: 'if .body.more then $cursor + 1 else null end'
    items: .body.items
  as: notices`,
	Caps: Caps{Network: true},
}

func init() { builtin.mustRegister(paginateSpec, decodePaginate) }

type paginateStep struct {
	req      *requestStep
	start    *JQ
	next     *JQ
	items    *JQ
	slot     int
	maxPages int
	maxItems int
	budget   time.Duration
}

func decodePaginate(c *Compiler, n *yaml.Node) Step {
	m, ok := c.Fields(n, &paginateSpec)
	if !ok {
		return nil
	}
	s := &paginateStep{maxPages: c.Limits.Pages, maxItems: c.Limits.Items}
	good := true
	if f, ok := m.Get("start"); ok {
		s.start = c.CompileJQ(f.Value, "start")
		good = good && s.start != nil
	}
	name := "cursor"
	if f, ok := m.Get("cursor"); ok {
		if name, ok = c.Doc.String(f.Value, "cursor", c.L); !ok || !nameRE.MatchString(name) || reservedNames[name] {
			c.Errorf(f.Value, "cursor: not a usable variable name")
			return nil
		}
	}
	if f, ok := m.Get("maxPages"); ok {
		s.maxPages, good = c.Int(f.Value, "maxPages", c.Limits.Pages)
	}
	if f, ok := m.Get("maxItems"); ok {
		var g bool
		s.maxItems, g = c.Int(f.Value, "maxItems", c.Limits.Items)
		good = good && g
	}
	if f, ok := m.Get("budget"); ok {
		var g bool
		s.budget, g = c.Duration(f.Value, "budget", c.Limits.Deadline)
		good = good && g
	}
	mark := c.Scope.Mark()
	s.slot = c.Scope.Bind(name)
	f, _ := m.Get("request")
	s.req = decodeRequestStep(c, f.Value)
	f, _ = m.Get("next")
	s.next = c.CompileJQ(f.Value, "next")
	if f, ok := m.Get("items"); ok {
		s.items = c.CompileJQ(f.Value, "items")
		good = good && s.items != nil
	}
	c.Scope.Reset(mark)
	if !good || s.req == nil || s.next == nil {
		return nil
	}
	return s
}

func (s *paginateStep) Run(ctx context.Context, f *Frame) (any, error) {
	began := time.Now()
	var cursor any
	var err error
	if s.start != nil {
		if cursor, err = s.start.First(ctx, f, f.Dot); err != nil {
			return nil, fmt.Errorf("start: %w", err)
		}
	}
	saved := f.Vars[s.slot]
	defer func() { f.Vars[s.slot] = saved }()
	seen := map[string]bool{}
	out := []any{}
	in := f.Dot
	for page := 0; page < s.maxPages; page++ {
		if s.budget > 0 && time.Since(began) >= s.budget {
			break
		}
		key, err := EncodeWithin(cursor, f.Limits.Depth, f.Limits.StringBytes)
		if err != nil {
			return nil, err
		}
		if seen[string(key)] {
			break // the cursor repeats: the server loops
		}
		seen[string(key)] = true
		f.Vars[s.slot] = cursor
		resp, err := s.req.do(ctx, f, in)
		if err != nil || f.ended {
			return nil, err
		}
		var items any = resp.(map[string]any)["body"]
		if s.items != nil {
			if items, err = s.items.First(ctx, f, resp); err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
		}
		switch l := items.(type) {
		case nil:
		case []any:
			for _, it := range l {
				if len(out) >= s.maxItems {
					return out, nil
				}
				out = append(out, it)
			}
		default:
			return nil, fmt.Errorf("items: expected a list, got %s", gojq.TypeOf(items))
		}
		next, err := s.next.First(ctx, f, resp)
		if err != nil {
			return nil, fmt.Errorf("next: %w", err)
		}
		if next == nil || next == false {
			break
		}
		cursor = next
	}
	return out, nil
}

var _ Step = (*paginateStep)(nil)
