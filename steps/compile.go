package steps

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
	"go.yaml.in/yaml/v3"
)

// Use is something a step reaches, checked against the declared access.
type Use struct {
	Pos     diag.Pos
	Service string // a campus service ...
	Path    string // ... and the literal start of its path
	Origin  string // or a web origin, scheme://host[:port]
	Ability string // or an ability ("kv")
	Headers []HeaderUse
	// Method is the HTTP method a request sends, upper case ("" when it is
	// only known at run time); only GET and HEAD are safe. MethodPos is
	// where it is written (the request when it is the default GET).
	Method    string
	MethodPos diag.Pos
	// PathLiteral says Path is the whole path, with no ${ } in it.
	PathLiteral bool
}

// Unsafe reports whether a request use can send a method that may change
// something: anything but GET and HEAD, a method known only at run time
// included.
func (u Use) Unsafe() bool {
	if u.Service == "" && u.Origin == "" {
		return false
	}
	return !safeMethod(u.Method)
}

// safeMethod reports whether an HTTP method only reads: GET or HEAD.
func safeMethod(m string) bool { return m == "GET" || m == "HEAD" }

// HeaderUse is a header a request sets, with where it is set.
type HeaderUse struct {
	Name string
	Pos  diag.Pos
}

// Compiler decodes one tool's steps. Kinds use its helpers to read fields,
// compile jq programs, templates and selectors, and to report problems.
type Compiler struct {
	Doc      *yamlx.Doc
	L        *diag.List
	Scope    *Scope
	Limits   *Limits
	Registry *Registry
	Plugin   *manifest.Plugin // the document, for its access (may be nil in tests)
	// AuthHeaders returns the headers a campus service's session uses (from
	// the catalogue), which steps may not set themselves.
	AuthHeaders func(service string) []string

	Uses  []Use
	Kinds []KindUse // every step compiled, in document order
	label string
	x     *yamlx.Ctx
}

// KindUse is one step of a kind, with where it is written.
type KindUse struct {
	Kind string
	Pos  diag.Pos
}

// nameRE is what `as` and other variable names look like.
var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedNames cannot be bound by `as` (sorted, as the schema lists them).
var reservedNames = []string{"ENV", "__loc__", "actor", "grant", "input", "prefs", "turn"}

// Block decodes a list of steps. label prefixes the steps' numbers ("3." for
// the steps inside step 3).
func (c *Compiler) Block(n *yaml.Node, what string) Block {
	if n == nil || n.Kind != yaml.SequenceNode {
		c.L.Errorf(c.Doc.NodePos(n), "%s must be a list of steps, not %s", what, yamlx.Describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		c.L.Errorf(c.Doc.NodePos(n), "%s must hold at least one step", what)
		return nil
	}
	if len(n.Content) > manifest.MaxSteps {
		c.L.Errorf(c.Doc.NodePos(n), "%s holds more than %d steps", what, manifest.MaxSteps)
		return nil
	}
	prefix := c.label
	out := make(Block, 0, len(n.Content))
	for i, sn := range n.Content {
		c.label = prefix + strconv.Itoa(i+1)
		if node := c.step(sn); node != nil {
			out = append(out, node)
		}
	}
	c.label = prefix
	out.settle()
	return out
}

// Nested decodes sub-steps with their own scope: names they bind are not
// visible after them. bind lists names visible only inside (a loop's item).
func (c *Compiler) Nested(n *yaml.Node, what string, bind ...string) (Block, []int) {
	mark := c.Scope.Mark()
	slots := make([]int, len(bind))
	for i, b := range bind {
		slots[i] = c.Scope.Bind(b)
	}
	saved := c.label
	c.label = saved + "."
	b := c.Block(n, what)
	c.label = saved
	c.Scope.Reset(mark)
	return b, slots
}

func (c *Compiler) step(sn *yaml.Node) *Node {
	pos := c.Doc.NodePos(sn)
	if sn.Kind != yaml.MappingNode {
		c.L.Errorf(pos, "a step must be a mapping with one kind key (%s), not %s", strings.Join(c.Registry.Kinds(), ", "), yamlx.Describe(sn))
		return nil
	}
	decl := c.Registry.stepDecl()
	o, good := c.ctx().Object(sn, decl)
	var kindKey, kindVal *yaml.Node
	for i := 0; i+1 < len(sn.Content); i += 2 {
		k := sn.Content[i]
		if _, kind := c.Registry.kinds[k.Value]; !kind {
			continue
		}
		if kindKey != nil {
			c.L.Errorf(c.Doc.NodePos(k), "a step has one kind, but this one has %q and %q", kindKey.Value, k.Value)
			good = false
			continue
		}
		kindKey, kindVal = k, sn.Content[i+1]
	}
	if kindKey == nil {
		if good {
			c.L.Errorf(pos, "a step needs one kind key: %s", strings.Join(c.Registry.Kinds(), ", "))
		}
		return nil
	}
	node := &Node{Kind: kindKey.Value, Label: c.label, Pos: pos}
	c.Kinds = append(c.Kinds, KindUse{Kind: kindKey.Value, Pos: pos})
	if v, ok := o.Get("if"); ok {
		node.If = v.Value.(*JQ)
	}
	c.ctx().Within(decl, func() { node.Step = c.Registry.kinds[kindKey.Value].decode(c, kindVal) })
	// The name is bound after the step: the step itself does not see it.
	if v, ok := o.Get("as"); ok {
		node.As = c.Scope.Bind(v.Value.(string)) + 1
	}
	if node.Step == nil || !good {
		return nil
	}
	return node
}

// ctx is the compiler's declared-value decoding (its Env is c).
func (c *Compiler) ctx() *yamlx.Ctx {
	if c.x == nil || c.x.Doc != c.Doc || c.x.L != c.L {
		c.x = yamlx.NewCtx(c.Doc, c.L, c)
	}
	return c.x
}

// Decode reads a kind's mapping against its declaration (see
// yamlx.Ctx.Object): unknown, misplaced, mistyped and missing keys are
// reported; the values come typed and compiled, with defaults.
func (c *Compiler) Decode(n *yaml.Node, d *yamlx.Decl) (*yamlx.Obj, bool) {
	return c.ctx().Object(n, d)
}

// Within decodes in fn with d as an enclosing declaration (for a field a
// kind decodes itself, later).
func (c *Compiler) Within(d *yamlx.Decl, fn func()) { c.ctx().Within(d, fn) }

// Pos is a node's file position.
func (c *Compiler) Pos(n *yaml.Node) diag.Pos { return c.Doc.NodePos(n) }

// Errorf reports a problem at a node.
func (c *Compiler) Errorf(n *yaml.Node, format string, args ...any) {
	c.L.Errorf(c.Doc.NodePos(n), format, args...)
}

// Cap checks a declared integer against a ceiling known only when
// compiling (a host limit): it returns the value, or the ceiling and false.
func (c *Compiler) Cap(v yamlx.Val, what string, max int, good bool) (int, bool) {
	n := v.Value.(int64)
	if n > int64(max) {
		c.Errorf(v.Node, "%s must be between 1 and %d", what, max)
		return max, false
	}
	return int(n), good
}

// Text reads a scalar that holds a jq program or a template: a string, or
// a number or boolean written without quotes, taken as it is written
// (`page: 1` is the text 1, `if: true` the program true). With jqNull, a
// bare null is the program null too (`return: null`); anywhere else null,
// and any list or map, is refused.
func (c *Compiler) Text(n *yaml.Node, what string, jqNull bool) (string, bool) {
	if n != nil && n.Kind == yaml.ScalarNode {
		switch n.Tag {
		case "!!str", "", "!!int", "!!float", "!!bool":
			return n.Value, true
		case "!!null":
			if jqNull && n.Value == "null" {
				return n.Value, true
			}
		}
	}
	if jqNull {
		c.L.Errorf(c.Doc.NodePos(n), "%s must be a jq program, not %s", what, yamlx.Describe(n))
	} else {
		c.L.Errorf(c.Doc.NodePos(n), "%s must be text (a string, a number or true/false), not %s", what, yamlx.Describe(n))
	}
	return "", false
}

// Use records what a step reaches.
func (c *Compiler) Use(u Use) { c.Uses = append(c.Uses, u) }

// CheckUses reports uses the document does not declare.
func (c *Compiler) CheckUses() {
	if c.Plugin == nil {
		return
	}
	acc := c.Plugin.Access
	for _, u := range c.Uses {
		switch {
		case u.Ability != "":
			if !c.Plugin.HasAbility(u.Ability) {
				c.L.Errorf(u.Pos, "this step uses the %s ability, which access.abilities does not declare", u.Ability)
			}
		case u.Service != "":
			ca, ok := acc.Service(u.Service)
			if !ok {
				declared := make([]string, 0, len(acc.Campus))
				for _, d := range acc.Campus {
					declared = append(declared, d.Service)
				}
				c.L.Errorf(u.Pos, "request to campus service %q, which access.campus does not declare%s", u.Service, serviceHint(u.Service, declared))
				break
			}
			if len(ca.Paths) > 0 && u.Path != "" {
				fits := func(p string) bool { return strings.HasPrefix(u.Path, p) || strings.HasPrefix(p, u.Path) }
				if !slices.ContainsFunc(ca.Paths, fits) {
					c.L.Errorf(u.Pos, "path %q is outside the paths access.campus declares for %s (%s)", u.Path, u.Service, strings.Join(ca.Paths, ", "))
				}
			}
			if c.AuthHeaders != nil {
				for _, h := range u.Headers {
					for _, a := range c.AuthHeaders(u.Service) {
						if strings.EqualFold(a, h.Name) {
							c.L.Errorf(h.Pos, "header %s carries the %s session: the proxy sets it, a step may not", h.Name, u.Service)
						}
					}
				}
			}
		case u.Origin != "":
			if !slices.ContainsFunc(acc.Web, func(o manifest.Origin) bool { return o.String() == u.Origin }) {
				c.L.Errorf(u.Pos, "request to %s, which access.web does not declare", u.Origin)
			}
		}
	}
}
