package devserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/steps"
	"go.yaml.in/yaml/v3"
)

// widgetRequest is the body of POST /api/widget.
type widgetRequest struct {
	Key string `json:"key"`
}

type widgetAnswer struct {
	Key    string     `json:"key"`
	Title  string     `json:"title"`
	UI     any        `json:"ui,omitempty"` // the rendered generative-UI JSON
	Error  string     `json:"error,omitempty"`
	Run    *runRecord `json:"run,omitempty"` // the data source's run
	Source string     `json:"source,omitempty"`
}

func (s *Server) serveWidget(w http.ResponseWriter, req *http.Request) {
	var wr widgetRequest
	if !s.readJSON(w, req, &wr) {
		return
	}
	sn := s.current()
	if sn.plugin == nil {
		s.apiError(w, http.StatusConflict, "the document does not parse: see its problems")
		return
	}
	var wd *manifest.Widget
	for i := range sn.plugin.Contributes.Widgets {
		if sn.plugin.Contributes.Widgets[i].Key == wr.Key {
			wd = &sn.plugin.Contributes.Widgets[i]
		}
	}
	if wd == nil {
		s.apiError(w, http.StatusNotFound, "the document has no widget %q", wr.Key)
		return
	}
	ans := widgetAnswer{Key: wd.Key, Title: wd.Title, Source: wd.DataSource}
	tmpl, ok := sn.plugin.Widgets[widgetTemplate(*wd)]
	if !ok {
		ans.Error = fmt.Sprintf("the document has no widget template %q", widgetTemplate(*wd))
		s.writeJSON(w, http.StatusOK, ans)
		return
	}
	var data any
	if wd.DataSource != "" {
		var ds *manifest.DataSource
		for i := range sn.plugin.DataSources {
			if sn.plugin.DataSources[i].Name == wd.DataSource {
				ds = &sn.plugin.DataSources[i]
			}
		}
		if ds == nil {
			ans.Error = fmt.Sprintf("the document has no data source %q", wd.DataSource)
			s.writeJSON(w, http.StatusOK, ans)
			return
		}
		release, ok := s.acquire(w)
		if !ok {
			return
		}
		ctx, cancel := s.runContext(req)
		rec, code := s.run(ctx, ds.Tool, ds.Args, false)
		cancel()
		release()
		if code != http.StatusOK {
			ans.Error = "the data source's tool: " + rec.Error
			s.writeJSON(w, http.StatusOK, ans)
			return
		}
		ans.Run = rec
		switch {
		case rec.Refused != "":
			ans.Error = "the data source's run was refused: " + rec.Refused
		case rec.Error != "":
			ans.Error = "the data source's run failed: " + rec.Error
		default:
			if data, ans.Error = decodeResult(rec); ans.Error != "" {
				break
			}
			// A value that does not match the tool's output schema is not
			// shown (registry.CheckOutput names no text of it).
			if err := registry.CheckOutput(sn.plugin, ds.Tool, data); err != nil {
				ans.Error = err.Error()
			}
		}
		if ans.Error != "" {
			s.writeJSON(w, http.StatusOK, ans)
			return
		}
	}
	ctx, cancel := context.WithTimeout(req.Context(), maxScratchDuration)
	defer cancel()
	ui, err := RenderWidget(ctx, "widgets/"+widgetTemplate(*wd)+".json", tmpl, data)
	if err != nil {
		ans.Error = steps.CleanString(err.Error())
	} else {
		ans.UI = ui
	}
	s.writeJSON(w, http.StatusOK, ans)
}

func decodeResult(rec *runRecord) (any, string) {
	v, err := steps.DecodeJSON(rec.Result, 64)
	if err != nil {
		return nil, "the data source's result is not JSON: " + err.Error()
	}
	return v, ""
}

// RenderWidget renders a generative-UI template with data: every string is
// a `${ JQ }` template compiled by the engine's step compiler (a string
// that is exactly one `${ JQ }` keeps its value's JSON type), evaluated on
// the data; an object with "items" and "item" renders "item" once per
// element of its rendered "items" (an object's values in key order), at
// most "max" of them (docs/plugin-format.md, "Widgets"). name places the
// template's problems.
func RenderWidget(ctx context.Context, name string, tmpl []byte, data any) (any, error) {
	var l diag.List
	doc := yamlx.Parse(name, tmpl, 1, nil, yamlx.Limits{MaxBytes: manifest.MaxWidgetBytes, MaxKeys: 20000, MaxDepth: 64}, &l)
	if l.HasErrors() {
		return nil, l.Err()
	}
	if doc.Root == nil {
		return nil, errors.New("the template is empty")
	}
	lim := steps.DefaultLimits()
	c := &steps.Compiler{Doc: doc, L: &l, Scope: steps.NewScope(), Limits: &lim, Registry: steps.Builtin()}
	r := &widgetRenderer{c: c, f: &steps.Frame{Limits: &lim}}
	tree := r.compile(doc.Root, "template")
	if l.HasErrors() {
		return nil, l.Err()
	}
	r.f.Vars = make([]any, c.Scope.Slots())
	return r.render(ctx, tree, data)
}

// wnode is a compiled template node.
type wnode struct {
	kind  yaml.Kind
	tmpl  *steps.Template // a string
	lit   any             // another scalar
	keys  []string
	vals  []*wnode
	items []*wnode
	pos   diag.Pos
}

type widgetRenderer struct {
	c *steps.Compiler
	f *steps.Frame
}

func (r *widgetRenderer) compile(n *yaml.Node, what string) *wnode {
	w := &wnode{kind: n.Kind, pos: r.c.Pos(n)}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			w.keys = append(w.keys, k)
			w.vals = append(w.vals, r.compile(n.Content[i+1], what+"."+k))
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			w.items = append(w.items, r.compile(e, what+"["+strconv.Itoa(i)+"]"))
		}
	case yaml.ScalarNode:
		if n.Tag == "!!str" {
			w.tmpl = r.c.TemplateString(n, n.Value, what, steps.Text)
			return w
		}
		var v any
		if err := n.Decode(&v); err != nil {
			r.c.Errorf(n, "%s: %v", what, err)
		}
		w.lit = v
	default:
		r.c.Errorf(n, "%s: an alias is not a template value", what)
	}
	return w
}

func (r *widgetRenderer) render(ctx context.Context, w *wnode, data any) (any, error) {
	switch w.kind {
	case yaml.MappingNode:
		out := make(map[string]any, len(w.keys))
		var item *wnode
		for i, k := range w.keys {
			if k == "item" {
				item = w.vals[i]
				continue
			}
			v, err := r.render(ctx, w.vals[i], data)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		if item != nil {
			var list []any
			switch x := out["items"].(type) {
			case []any:
				list = x
			case map[string]any: // an object lists its values, in key order
				for _, k := range slices.Sorted(maps.Keys(x)) {
					list = append(list, x[k])
				}
			case nil:
			default:
				return nil, fmt.Errorf("%s: items must give a list to render item for each, not %T", w.pos, out["items"])
			}
			if max, ok := out["max"].(int); ok && max > 0 && len(list) > max {
				list = list[:max] // the app shows at most max
			}
			rendered := make([]any, 0, len(list))
			for _, e := range list {
				v, err := r.render(ctx, item, e)
				if err != nil {
					return nil, err
				}
				rendered = append(rendered, v)
			}
			out["items"] = rendered
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(w.items))
		for _, e := range w.items {
			v, err := r.render(ctx, e, data)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	if w.tmpl == nil {
		return w.lit, nil
	}
	if q := w.tmpl.Single(); q != nil {
		v, err := q.First(ctx, r.f, data)
		if err != nil {
			return nil, fmt.Errorf("%s: in ${ %s }: %v", w.pos, q.Src, err)
		}
		return v, nil
	}
	s, err := w.tmpl.Render(ctx, r.f, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", w.pos, err)
	}
	return s, nil
}
