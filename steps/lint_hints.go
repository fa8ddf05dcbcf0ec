package steps

import (
	"fmt"
	"regexp"

	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/proxy"
	"go.yaml.in/yaml/v3"
)

// bareVarRE finds a variable written in a template's text, outside ${ }:
// $name with its path (.field, .field.sub).
var bareVarRE = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)`)

// warnBareVars warns for each variable the step can see ($input, $prefs, a
// name bound with as, $item, $cursor) that a template's literal text
// names outside ${ }: `limit: $input.limit` sends the text
// "$input.limit" (as limit=%24input.limit), a slip nothing else reports.
// lit is a literal run of the template, starting at byte off of n's value.
func (c *Compiler) warnBareVars(n *yaml.Node, lit string, off int, what string) {
	if c.Scope == nil {
		return
	}
	for _, m := range bareVarRE.FindAllStringSubmatchIndex(lit, -1) {
		name := lit[m[2]:m[3]]
		if _, ok := c.Scope.Lookup(name); !ok {
			continue
		}
		ref := lit[m[0]:m[1]]
		c.L.Warnf(c.at(n, off)(m[0]), "%s: %s is the text %q here, not its value: write ${ %s } to insert it", what, ref, ref, ref)
	}
}

// serviceHint is ` (did you mean "card"?)` for a campus service name close
// to one the document declares or, else, to one of the built-in
// catalogue, and "" when none is close.
func serviceHint(name string, declared []string) string {
	if h := yamlx.DidYouMean(name, declared); h != "" {
		return h
	}
	if s := yamlx.Suggest(name, proxy.Builtin().Names()); s != "" && s != name {
		return fmt.Sprintf(" (did you mean %q, a service of the built-in catalogue?)", s)
	}
	return ""
}
