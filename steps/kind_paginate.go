package steps

import (
	"context"
	"fmt"
	"time"

	"github.com/itchyny/gojq"
	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

var paginateDecl = &yamlx.Decl{Name: "paginate", Fields: []yamlx.Field{
	{Name: "request", Type: yamlx.Later{Of: yamlx.Named{Type: yamlx.Object{Decl: requestDecl}, Label: "request"}}, Required: true, Doc: "the request, as the request kind; its templates see $cursor"},
	{Name: "start", Type: JQType, Default: "null", Doc: "the first cursor (on the step's input)"},
	{Name: "next", Type: yamlx.Later{Of: JQType}, Required: true, Doc: "on each response (the request's output, with $cursor): the next cursor; null, false or nothing stops"},
	{Name: "items", Type: yamlx.Later{Of: JQType}, Default: ".body", Doc: "on each response: the page's items (an array)"},
	{Name: "cursor", Type: NameType, Default: "cursor", Doc: "the cursor's variable name"},
	{Name: "maxPages", Type: yamlx.Int{Min: 1}, Doc: "pages to fetch at most (default and ceiling: the pages limit)"},
	{Name: "maxItems", Type: yamlx.Int{Min: 1}, Doc: "items to collect at most (default and ceiling: the items limit)"},
	{Name: "budget", Type: yamlx.Duration{}, Doc: "stop asking for more pages once this much time has passed (at most the call's deadline)"},
}}

var paginateSpec = Spec{
	Kind: "paginate",
	Summary: "Repeat a request while a jq expression yields the next page's cursor, collecting items; stops at null, a repeated cursor, " +
		"maxPages, maxItems or the time budget (without error), and fails on the host's limits.",
	Decl: paginateDecl,
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
	m, good := c.Decode(n, paginateDecl)
	if m == nil {
		return nil
	}
	s := &paginateStep{maxPages: c.Limits.Pages, maxItems: c.Limits.Items}
	s.start, _ = m.Value("start").(*JQ)
	if v, ok := m.Get("maxPages"); ok {
		s.maxPages, good = c.Cap(v, "maxPages", c.Limits.Pages, good)
	}
	if v, ok := m.Get("maxItems"); ok {
		s.maxItems, good = c.Cap(v, "maxItems", c.Limits.Items, good)
	}
	if v, ok := m.Get("budget"); ok {
		s.budget = v.Value.(time.Duration)
		if s.budget > c.Limits.Deadline {
			c.Errorf(v.Node, "budget must be at most %s", c.Limits.Deadline)
			good = false
		}
	}
	name := m.String("cursor")
	if name == "" {
		return nil // a bad name, reported
	}
	mark := c.Scope.Mark()
	s.slot = c.Scope.Bind(name)
	c.Within(paginateDecl, func() {
		if rn := m.NodeOf("request"); rn != nil {
			s.req = decodeRequestStep(c, rn)
		}
		if nn := m.NodeOf("next"); nn != nil {
			s.next = c.CompileJQ(nn, "next")
		}
		if in := m.NodeOf("items"); in != nil {
			s.items = c.CompileJQ(in, "items")
			good = good && s.items != nil
		}
	})
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
