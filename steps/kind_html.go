package steps

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
	"golang.org/x/net/html"
)

var htmlSpec = Spec{
	Kind: "html",
	Summary: "Extract records from an HTML string with CSS selectors: one object per element `select` matches, each field the trimmed text " +
		"(or attribute) of the first match inside it; without fields, the list of trimmed texts.",
	Decl: extractDecl("html", "the HTML text", cssType{}, "the elements to extract",
		"NAME: CSS (text of the first match inside), or {select: CSS (default: the element itself), attr: NAME, all: true (a list of every match)}"),
	Example: `- jq: '{body: "<ul><li><a href=\"/a\">A</a></li><li><a href=\"/b\">B</a></li></ul>"}'
- html:
    select: li
    min: 1
    fields:
      title: a
      link: { select: a, attr: href }`,
}

func init() { builtin.mustRegister(htmlSpec, decodeHTML) }

type htmlStep struct {
	from   *JQ
	sel    cascadia.Selector
	src    string // the selector as written, for messages
	min    int
	fields []htmlField
}

type htmlField = fieldSpec[cascadia.Selector]

// cssType is a CSS selector; it decodes to a cascadia.Selector.
type cssType struct{}

func (cssType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	s := compilerOf(c).CompileSelector(n, what)
	return s, s != nil
}
func (cssType) Schema(*yamlx.Gen) map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "maxLength": maxSelector}
}
func (cssType) Name() string { return "css" }

// maxSelector bounds a CSS selector's length.
const maxSelector = 1000

var hasRE = regexp.MustCompile(`:has\(`)

// CompileSelector compiles a CSS selector held by scalar n, refusing those
// whose matching cost can explode (nested :has, too many parts).
func (c *Compiler) CompileSelector(n *yaml.Node, what string) cascadia.Selector {
	s, ok := c.Doc.String(n, what, c.L)
	if !ok {
		return nil
	}
	if strings.TrimSpace(s) == "" {
		c.Errorf(n, "%s: empty CSS selector", what)
		return nil
	}
	if len(s) > maxSelector {
		c.Errorf(n, "%s: CSS selector longer than %d characters", what, maxSelector)
		return nil
	}
	sel, err := cascadia.Compile(s)
	if err != nil {
		c.Errorf(n, "%s: CSS selector %q does not parse: %v", what, s, err)
		return nil
	}
	if cost := selectorCost(s); cost > c.Limits.SelectorCost {
		c.Errorf(n, "%s: CSS selector %q is too costly to match (cost %d, limit %d): use fewer parts or :has", what, s, cost, c.Limits.SelectorCost)
		return nil
	}
	if nestedHas(s) {
		c.Errorf(n, "%s: CSS selector %q nests :has, whose matching cost can explode", what, s)
		return nil
	}
	if siblingInHas(s) {
		c.Errorf(n, "%s: CSS selector %q puts a ~ combinator inside :has, whose matching cost can explode", what, s)
		return nil
	}
	return sel
}

// selectorCost counts compound selectors (split at combinators and commas)
// and weighs :has and :not heavily.
func selectorCost(s string) int {
	cost := 1
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ' ', '>', '+', '~', ',':
			if i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '>' && s[i+1] != '+' && s[i+1] != '~' {
				cost++
			}
		}
	}
	cost += 8 * len(hasRE.FindAllStringIndex(s, -1))
	cost += 2 * strings.Count(s, ":not(")
	return cost
}

// siblingInHas reports a general sibling combinator (~, not the attribute
// operator ~=) inside a :has argument: :has tries its argument on every
// descendant and ~ walks every earlier sibling of each, in one match that
// no deadline can interrupt.
func siblingInHas(s string) bool {
	return inHas(s, func(i int) bool { return s[i] == '~' && (i+1 >= len(s) || s[i+1] != '=') })
}

// nestedHas reports a :has inside a :has argument.
func nestedHas(s string) bool {
	return inHas(s, func(i int) bool { return strings.HasPrefix(s[i:], ":has(") })
}

// inHas reports whether found holds at some byte inside a :has argument.
func inHas(s string, found func(i int) bool) bool {
	for _, m := range hasRE.FindAllStringIndex(s, -1) {
		depth := 1
		for i := m[1]; i < len(s) && depth > 0; i++ {
			switch s[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth > 0 && found(i) {
				return true
			}
		}
	}
	return false
}

func decodeHTML(c *Compiler, n *yaml.Node) Step {
	m, ok := c.Decode(n, htmlSpec.Decl)
	if !ok {
		return nil
	}
	s := &htmlStep{sel: m.Value("select").(cascadia.Selector), min: int(m.Int("min"))}
	s.src = m.NodeOf("select").Value
	s.from, _ = m.Value("from").(*JQ)
	if m.Has("fields") {
		s.fields = typedFields[cascadia.Selector](m.Value("fields"))
	}
	return s
}

// dotUse: `.` is read by from, or its body is.
func (s *htmlStep) dotUse() ([]*JQ, []string) { return []*JQ{s.from}, []string{"body"} }

func (s *htmlStep) Run(ctx context.Context, f *Frame) (any, error) {
	text, err := textFrom(ctx, f, s.from, "body")
	if err != nil {
		return nil, err
	}
	root, err := html.ParseWithOptions(strings.NewReader(text))
	if err != nil {
		if strings.Contains(err.Error(), "open stack of elements") {
			// The parser's own bound on nesting, past any htmlDepth.
			return nil, &LimitError{Limit: "htmlDepth", Max: int64(f.Limits.HTMLDepth), What: "the document's nesting"}
		}
		return nil, fmt.Errorf("the page cannot be parsed: %v", err)
	}
	if err := checkTree(root, f.Limits); err != nil {
		return nil, err
	}
	nodes, err := matchNodes(ctx, root, s.sel, false)
	if err != nil {
		return nil, err
	}
	if len(nodes) > f.Limits.Items {
		return nil, &LimitError{Limit: "items", Max: int64(f.Limits.Items), What: fmt.Sprintf("%d matched elements", len(nodes))}
	}
	if len(nodes) < s.min {
		return nil, tooFew(strconv.Quote(s.src), len(nodes), s.min)
	}
	targets := func(el *goquery.Selection, fd htmlField) ([]*goquery.Selection, error) {
		found, err := matchNodes(ctx, el.Nodes[0], fd.sel, !fd.all)
		return selections(el.FindNodes(found...)), err
	}
	return records(ctx, selections(goquery.NewDocumentFromNode(root).Selection.FindNodes(nodes...)), s.fields, f.Limits, targets,
		func(t *goquery.Selection, attr string) any { return value(t, attr, f.Limits.FieldBytes, f.Redact) })
}

// selections lists a selection's elements, each as a selection of its own.
func selections(sel *goquery.Selection) []*goquery.Selection {
	out := make([]*goquery.Selection, sel.Length())
	for i := range out {
		out[i] = sel.Eq(i)
	}
	return out
}

// matchNodes lists the elements under root that sel matches, in document
// order (only the first when first is set), checking ctx between elements:
// one selector can cost time quadratic in a page's width (a sibling
// combinator over positional pseudo-classes), and the call's deadline must
// still stop it.
func matchNodes(ctx context.Context, root *html.Node, sel cascadia.Selector, first bool) ([]*html.Node, error) {
	var out []*html.Node
	stack := []*html.Node{}
	for c := root.LastChild; c != nil; c = c.PrevSibling {
		stack = append(stack, c)
	}
	for i := 0; len(stack) > 0; i++ {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i&63 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if n.Type == html.ElementNode && sel.Match(n) {
			out = append(out, n)
			if first {
				break
			}
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return out, nil
}

// capText trims s and cuts it at max bytes (on a character boundary).
func capText(s string, max int) string {
	s = strings.TrimSpace(s)
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "")
	}
	return s
}

// value is an element's text (or attribute), redacted (with red, when not
// nil) before it is cut. An element's text joins its text nodes across
// any markup (a comment, a tag, however long, between two halves of a
// session the page shows whole), where the proxy's redaction of the page
// removes only short breaks; and a cut of a text that holds a credential
// would show its start.
func value(t *goquery.Selection, attr string, max int, red Redactor) any {
	if attr != "" {
		v, ok := t.Attr(attr)
		if !ok {
			return nil
		}
		return capText(redactText(red, v), max)
	}
	return capText(redactText(red, t.Text()), max)
}

// redactText is s redacted with red (nil: s).
func redactText(red Redactor, s string) string {
	if red == nil {
		return s
	}
	return red.Redact(s)
}

// checkTree bounds a parsed document's size and depth before any selector
// or recursive walk runs over it.
func checkTree(root *html.Node, lim *Limits) error {
	type item struct {
		n *html.Node
		d int
	}
	stack := []item{{root, 0}}
	count := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		count++
		if count > lim.HTMLNodes {
			return &LimitError{Limit: "htmlNodes", Max: int64(lim.HTMLNodes), What: "the document's nodes"}
		}
		if it.d > lim.HTMLDepth {
			return &LimitError{Limit: "htmlDepth", Max: int64(lim.HTMLDepth), What: "the document's nesting"}
		}
		for c := it.n.FirstChild; c != nil; c = c.NextSibling {
			stack = append(stack, item{c, it.d + 1})
		}
	}
	return nil
}

var _ Step = (*htmlStep)(nil)
