package steps

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

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
	return u.Method != "GET" && u.Method != "HEAD"
}

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
}

// KindUse is one step of a kind, with where it is written.
type KindUse struct {
	Kind string
	Pos  diag.Pos
}

// nameRE is what `as` and other variable names look like.
var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedNames cannot be bound by `as`.
var reservedNames = map[string]bool{"input": true, "prefs": true, "ENV": true, "__loc__": true}

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
	var kindKey, kindVal, asN, ifN *yaml.Node
	bad := false
	for i := 0; i+1 < len(sn.Content); i += 2 {
		k, v := sn.Content[i], sn.Content[i+1]
		switch {
		case k.Value == "as":
			asN = v
		case k.Value == "if":
			ifN = v
		case c.Registry.has(k.Value):
			if kindKey != nil {
				c.L.Errorf(c.Doc.NodePos(k), "a step has one kind, but this one has %q and %q", kindKey.Value, k.Value)
				bad = true
				continue
			}
			kindKey, kindVal = k, v
		default:
			known := append(c.Registry.Kinds(), "as", "if")
			msg := fmt.Sprintf("unknown step key %q", k.Value)
			if s := yamlx.Suggest(k.Value, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += " (kinds: " + strings.Join(c.Registry.Kinds(), ", ") + ")"
			}
			c.L.Errorf(c.Doc.NodePos(k), "%s", msg)
			bad = true
		}
	}
	if kindKey == nil {
		if !bad {
			c.L.Errorf(pos, "a step needs one kind key: %s", strings.Join(c.Registry.Kinds(), ", "))
		}
		return nil
	}
	node := &Node{Kind: kindKey.Value, Label: c.label, Pos: pos}
	c.Kinds = append(c.Kinds, KindUse{Kind: kindKey.Value, Pos: pos})
	if ifN != nil {
		node.If = c.CompileJQ(ifN, "if")
	}
	e := c.Registry.kinds[kindKey.Value]
	node.Step = e.decode(c, kindVal)
	// The name is bound after the step: the step itself does not see it.
	if asN != nil {
		if name, ok := c.Doc.String(asN, "as", c.L); ok {
			switch {
			case !nameRE.MatchString(name):
				c.L.Errorf(c.Doc.NodePos(asN), "as: %q is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", name)
			case reservedNames[name]:
				c.L.Errorf(c.Doc.NodePos(asN), "as: $%s is reserved", name)
			default:
				node.As = c.Scope.Bind(name) + 1
			}
		}
	}
	if node.Step == nil || bad {
		return nil
	}
	return node
}

func (r *Registry) has(kind string) bool { _, ok := r.kinds[kind]; return ok }

// Fields reads a kind's mapping, refusing keys the spec does not list and
// reporting missing required ones.
func (c *Compiler) Fields(n *yaml.Node, spec *Spec) (*yamlx.Map, bool) {
	known := make([]string, len(spec.Fields))
	for i, f := range spec.Fields {
		known[i] = f.Name
	}
	m, ok := c.Doc.Mapping(n, spec.Kind, known, c.L)
	if !ok {
		return nil, false
	}
	for _, f := range spec.Fields {
		if f.Required && !m.Has(f.Name) {
			c.L.Errorf(c.Doc.NodePos(n), "%s needs %q", spec.Kind, f.Name)
			ok = false
		}
	}
	return m, ok
}

// Pos is a node's file position.
func (c *Compiler) Pos(n *yaml.Node) diag.Pos { return c.Doc.NodePos(n) }

// Errorf reports a problem at a node.
func (c *Compiler) Errorf(n *yaml.Node, format string, args ...any) {
	c.L.Errorf(c.Doc.NodePos(n), format, args...)
}

// Int reads a positive integer no larger than max.
func (c *Compiler) Int(n *yaml.Node, what string, max int) (int, bool) {
	v, ok := c.Doc.Int(n, what, c.L)
	if !ok {
		return 0, false
	}
	if v < 1 || v > int64(max) {
		c.Errorf(n, "%s must be between 1 and %d", what, max)
		return 0, false
	}
	return int(v), true
}

// Text reads a scalar that holds a jq program or a template: a string, or
// a number or boolean written without quotes, taken as it is written
// (`page: 1` is the text 1, `if: true` the program true). With jqNull, a
// bare null is the program null too (`return: null`); anywhere else null,
// and any list or map, is refused.
func (c *Compiler) Text(n *yaml.Node, what string, jqNull bool) (string, bool) {
	if n != nil && n.Kind == yaml.ScalarNode {
		switch n.Tag {
		case "!!str", "":
			return n.Value, true
		case "!!int", "!!float", "!!bool":
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

// Duration reads a duration ("500ms", "10s") no longer than max.
func (c *Compiler) Duration(n *yaml.Node, what string, max time.Duration) (time.Duration, bool) {
	s, ok := c.Doc.String(n, what, c.L)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		c.Errorf(n, "%s: %q is not a duration such as 500ms or 10s", what, s)
		return 0, false
	}
	if d > max {
		c.Errorf(n, "%s must be at most %s", what, max)
		return 0, false
	}
	return d, true
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
				c.L.Errorf(u.Pos, "request to campus service %q, which access.campus does not declare", u.Service)
				break
			}
			if len(ca.Paths) > 0 && u.Path != "" {
				fits := false
				for _, p := range ca.Paths {
					if strings.HasPrefix(u.Path, p) || strings.HasPrefix(p, u.Path) {
						fits = true
					}
				}
				if !fits {
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
			ok := false
			for _, o := range acc.Web {
				if o.String() == u.Origin {
					ok = true
				}
			}
			if !ok {
				c.L.Errorf(u.Pos, "request to %s, which access.web does not declare", u.Origin)
			}
		}
	}
}
