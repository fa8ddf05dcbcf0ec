package steps

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

var xmlSpec = Spec{
	Kind: "xml",
	Summary: "Extract records from XML, RSS or Atom with element paths: one object per element `select` matches, each field the trimmed text " +
		"(or attribute) of the first match below it; without fields, the list of trimmed texts.",
	Decl: extractDecl("xml", "the XML text", xmlPathType{},
		"element names separated by /, matched at any depth (`item`, `channel/item`); a leading / anchors at the root; * matches any name; prefixes (dc:creator) match the local name",
		"NAME: PATH below the element, or {select: PATH (default: the element itself), attr: NAME, all: true}"),
	Example: `- jq: '{body: "<rss><channel><item><title>A</title><link>https://a</link></item></channel></rss>"}'
- xml:
    select: item
    min: 1
    fields: { title: title, link: link }`,
}

func init() { builtin.mustRegister(xmlSpec, decodeXML) }

type xmlPath struct {
	abs   bool
	names []string
}

type xmlStep struct {
	from   *JQ
	sel    xmlPath
	src    string // the path as written, for messages
	min    int
	fields []fieldSpec[xmlPath]
}

// xmlPathType is an element path; it decodes to an xmlPath.
type xmlPathType struct{}

var xmlPathString = yamlx.String{MaxLen: 500, Hint: "an element path such as channel/item",
	Pattern: regexp.MustCompile(`^/?(\*|[A-Za-z_][\w.:-]*)(/(\*|[A-Za-z_][\w.:-]*))*$`)}

func (xmlPathType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	s, ok := c.Doc.String(n, what, c.L)
	if !ok || !xmlPathString.Check(c, n, what, s) {
		return nil, false
	}
	p := xmlPath{abs: strings.HasPrefix(s, "/")}
	for _, name := range strings.Split(strings.TrimPrefix(s, "/"), "/") {
		if i := strings.LastIndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		p.names = append(p.names, name)
	}
	return p, true
}
func (xmlPathType) Schema(g *yamlx.Gen) map[string]any { return xmlPathString.Schema(g) }
func (xmlPathType) Name() string                       { return "path" }

func decodeXML(c *Compiler, n *yaml.Node) Step {
	m, ok := c.Decode(n, xmlSpec.Decl)
	if !ok {
		return nil
	}
	s := &xmlStep{sel: m.Value("select").(xmlPath), src: m.NodeOf("select").Value, min: int(m.Int("min"))}
	s.from, _ = m.Value("from").(*JQ)
	if m.Has("fields") {
		s.fields = typedFields[xmlPath](m.Value("fields"))
		for i := range s.fields {
			s.fields[i].sel.abs = false // a field's path is below the element
		}
	}
	return s
}

type xnode struct {
	name     string
	attrs    map[string]string
	parent   *xnode
	children []*xnode
	parts    []any // string or *xnode, in document order
	depth    int
}

// textOf concatenates the text below n, at most max bytes.
func (n *xnode) textOf(max int) string {
	var b strings.Builder
	var walk func(*xnode) bool
	walk = func(n *xnode) bool {
		for _, p := range n.parts {
			switch p := p.(type) {
			case string:
				if b.Len()+len(p) > max {
					b.WriteString(p[:max-b.Len()])
					return false
				}
				b.WriteString(p)
			case *xnode:
				if !walk(p) {
					return false
				}
			}
		}
		return true
	}
	walk(n)
	return strings.ToValidUTF8(b.String(), "")
}

func parseXML(text string, lim *Limits) (*xnode, error) {
	d := xml.NewDecoder(strings.NewReader(text))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	root := &xnode{}
	cur := root
	count := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("xml: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			count++
			if count > lim.HTMLNodes {
				return nil, &LimitError{Limit: "htmlNodes", Max: int64(lim.HTMLNodes), What: "the document's elements"}
			}
			n := &xnode{name: t.Name.Local, parent: cur, depth: cur.depth + 1}
			if n.depth > lim.HTMLDepth {
				return nil, &LimitError{Limit: "htmlDepth", Max: int64(lim.HTMLDepth), What: "the document's nesting"}
			}
			if len(t.Attr) > 0 {
				n.attrs = make(map[string]string, len(t.Attr))
				for _, a := range t.Attr {
					n.attrs[a.Name.Local] = a.Value
				}
			}
			cur.children = append(cur.children, n)
			cur.parts = append(cur.parts, n)
			cur = n
		case xml.EndElement:
			if cur.parent != nil {
				cur = cur.parent
			}
		case xml.CharData:
			cur.parts = append(cur.parts, string(t))
		}
	}
	return root, nil
}

// matches reports whether n's ancestry ends with p's names.
func (p xmlPath) matches(n *xnode, base *xnode) bool {
	for i := len(p.names) - 1; i >= 0; i-- {
		if n == nil || n == base || n.parent == nil && n.name == "" {
			return false
		}
		if p.names[i] != "*" && p.names[i] != n.name {
			return false
		}
		n = n.parent
	}
	if p.abs {
		return n != nil && n.parent == nil && n.name == ""
	}
	return true
}

// find lists the elements below base that p matches, in document order.
func (p xmlPath) find(base *xnode, max int) []*xnode {
	var out []*xnode
	var walk func(*xnode)
	walk = func(n *xnode) {
		for _, c := range n.children {
			if len(out) > max {
				return
			}
			if p.matches(c, base) {
				out = append(out, c)
			}
			walk(c)
		}
	}
	walk(base)
	return out
}

func (s *xmlStep) Run(ctx context.Context, f *Frame) (any, error) {
	text, err := textFrom(ctx, f, s.from, "body")
	if err != nil {
		return nil, err
	}
	root, err := parseXML(text, f.Limits)
	if err != nil {
		return nil, err
	}
	els := s.sel.find(root, f.Limits.Items)
	if len(els) > f.Limits.Items {
		return nil, &LimitError{Limit: "items", Max: int64(f.Limits.Items), What: "the matched elements"}
	}
	if len(els) < s.min {
		return nil, tooFew(strconv.Quote(s.src), len(els), s.min)
	}
	targets := func(el *xnode, fd fieldSpec[xmlPath]) ([]*xnode, error) {
		found := fd.sel.find(el, f.Limits.Items) // at most one more than the limit
		if fd.all && len(found) > f.Limits.Items {
			return nil, tooManyValues(f.Limits)
		}
		return found, nil
	}
	return records(ctx, els, s.fields, f.Limits, targets, func(t *xnode, attr string) any { return xvalue(t, attr, f.Limits.FieldBytes, f.Redact) })
}

// redactMargin is how much more of an element's text than the field's
// bound is read when it is redacted before the cut: more than the longest
// form of the longest credential (16 KiB, as hex 32 KiB, as base64 of its
// UTF-16 43 KiB), so that no credential the cut would split goes unseen.
const redactMargin = 64 << 10

// xvalue is an element's text (or attribute), redacted (with red, when
// not nil) before it is cut, as the html step's value is.
func xvalue(n *xnode, attr string, max int, red Redactor) any {
	if attr != "" {
		v, ok := n.attrs[attr]
		if !ok {
			return nil
		}
		return strings.TrimSpace(redactText(red, v))
	}
	if red == nil {
		return strings.TrimSpace(n.textOf(max))
	}
	t := red.Redact(n.textOf(max + redactMargin))
	if len(t) > max {
		t = strings.ToValidUTF8(t[:max], "")
	}
	return strings.TrimSpace(t)
}

var _ Step = (*xmlStep)(nil)
