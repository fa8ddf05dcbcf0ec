package steps

import (
	"context"
	"fmt"

	"strings"

	"github.com/itchyny/gojq"
	"github.com/pkuinfo/harness/internal/yamlx"
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

// extractDecl declares html's and xml's keys, with sel the selector type
// (a CSS selector, an element path).
func extractDecl(kind, doc string, sel yamlx.Type, selDoc, fieldsDoc string) *yamlx.Decl {
	return &yamlx.Decl{Name: kind, Fields: []yamlx.Field{
		{Name: "from", Type: JQType, Default: ".body", Doc: doc},
		{Name: "select", Type: sel, Required: true, Doc: selDoc},
		{Name: "fields", Type: fieldsType{field: &yamlx.Decl{Name: "a field", Fields: []yamlx.Field{
			{Name: "select", Type: sel, Doc: "the match inside the element (default: the element itself)"},
			{Name: "attr", Type: yamlx.String{}, Doc: "the attribute's value instead of the text"},
			{Name: "all", Type: yamlx.Bool{}, Default: false, Doc: "a list of every match instead of the first"},
		}}}, Doc: fieldsDoc},
		{Name: "min", Type: yamlx.Int{Min: 1}, Doc: "fail the step when fewer elements match select (a page whose layout changed)"},
	}}
}

// fieldsType is NAME: SELECTOR | {select, attr, all}; it decodes to
// []fieldSpec[any], each selector as its type decodes it.
type fieldsType struct{ field *yamlx.Decl }

func (t fieldsType) sel() yamlx.Field { f, _ := t.field.Field("select"); return *f }

func (t fieldsType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	m, ok := c.Doc.Mapping(n, what, nil, c.L)
	if !ok {
		return nil, false
	}
	var out []fieldSpec[any]
	for _, kv := range m.Fields {
		fd := fieldSpec[any]{name: kv.Key}
		if kv.Value.Kind == yaml.ScalarNode {
			var good bool
			fd.sel, good = t.sel().Type.Decode(c, kv.Value, what+"."+kv.Key)
			fd.has = true
			ok = ok && good
			out = append(out, fd)
			continue
		}
		d := *t.field
		d.Name = what + "." + kv.Key
		o, good := c.Object(kv.Value, &d)
		ok = ok && good
		if !good {
			continue
		}
		if v, set := o.Get("select"); set {
			fd.sel, fd.has = v.Value, true
		}
		fd.attr, fd.all = o.String("attr"), o.Bool("all")
		out = append(out, fd)
	}
	return out, ok
}

func (t fieldsType) Schema(g *yamlx.Gen) map[string]any {
	return map[string]any{"type": "object", "additionalProperties": map[string]any{"oneOf": []any{
		t.sel().Type.Schema(g), g.Object(t.field),
	}}}
}

func (t fieldsType) Name() string {
	return "map of " + t.sel().Type.Name() + " | {" + strings.Join(t.field.Keys(), ", ") + "}"
}

func (t fieldsType) Decls() []*yamlx.Decl { return []*yamlx.Decl{t.field} }

// typedFields converts decoded fields to their selector type.
func typedFields[S any](v any) []fieldSpec[S] {
	list, _ := v.([]fieldSpec[any])
	out := make([]fieldSpec[S], len(list))
	for i, f := range list {
		out[i] = fieldSpec[S]{name: f.name, has: f.has, attr: f.attr, all: f.all}
		if f.has {
			out[i].sel = f.sel.(S)
		}
	}
	return out
}

// records extracts the elements an html or xml step matched: without
// fields each one's text, else one object per element holding each field's
// value: of the first of its targets (null when there is none), or with all
// the list of them, at most 16 times the items limit in all the fields.
// targets finds a field's targets inside an element (without a selector,
// the element itself is the target); value is a target's text or attr.
func records[S, E any](ctx context.Context, els []E, fields []fieldSpec[S], lim *Limits,
	targets func(el E, fd fieldSpec[S]) ([]E, error), value func(t E, attr string) any) ([]any, error) {
	out := make([]any, 0, len(els))
	budget := 16 * lim.Items // values all fields may extract
	for _, el := range els {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(fields) == 0 {
			out = append(out, value(el, ""))
			continue
		}
		rec := make(map[string]any, len(fields))
		for _, fd := range fields {
			ts := []E{el}
			if fd.has {
				var err error
				if ts, err = targets(el, fd); err != nil {
					return nil, err
				}
			}
			switch {
			case fd.all:
				if budget -= len(ts); budget < 0 {
					return nil, tooManyValues(lim)
				}
				list := make([]any, len(ts))
				for i, t := range ts {
					list[i] = value(t, fd.attr)
				}
				rec[fd.name] = list
			case len(ts) == 0:
				rec[fd.name] = nil
			default:
				rec[fd.name] = value(ts[0], fd.attr)
			}
		}
		out = append(out, rec)
	}
	return out, nil
}

func tooManyValues(lim *Limits) error {
	return &LimitError{Limit: "items", Max: int64(16 * lim.Items), What: "the extracted values"}
}

// tooFew is the error of an extraction that matched fewer elements than
// its min.
func tooFew(what string, got, min int) error {
	return fmt.Errorf("select %s matched %d elements, fewer than min: %d (has the page changed?)", what, got, min)
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
