package interpreter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
)

// ToolEffect is a tool's effect as the engine sees it: what the document
// declares, raised to at least write when a step can send an unsafe
// method (POST, PUT, PATCH, DELETE, or one known only at run time) to a
// path the catalogue does not mark as a query endpoint, or to a web
// origin (web requests have no query endpoints).
type ToolEffect struct {
	Declared  manifest.Effect
	Effective manifest.Effect
	// Raised are the requests that raised it, in step order (empty when
	// Effective is Declared).
	Raised []steps.Use
}

// Why says in words why the effective effect is above the declared one
// ("declared read, sends POST to card /x"), or "" when it is not.
func (e ToolEffect) Why() string {
	if len(e.Raised) == 0 {
		return ""
	}
	s := fmt.Sprintf("declared %s, sends %s", e.Declared, SendWords(e.Raised[0]))
	if n := len(e.Raised) - 1; n == 1 {
		s += " and 1 more unsafe request"
	} else if n > 1 {
		s += fmt.Sprintf(" and %d more unsafe requests", n)
	}
	return s
}

// SendWords describes one request: "POST to card /x", "DELETE to
// https://example.org", "a method chosen at run time to portal /a/…".
func SendWords(u steps.Use) string {
	m := u.Method
	if m == "" {
		m = "a method chosen at run time"
	}
	if u.Origin != "" {
		return m + " to " + u.Origin
	}
	p := u.Path
	if !u.PathLiteral {
		p += "…"
	}
	if !plainPath(u.Path) {
		p = strconv.Quote(p) // the document's text: shown as text
	}
	return m + " to " + u.Service + " " + p
}

// plainPath reports whether a path holds only what a URL path holds
// unescaped (letters, digits, "/" and RFC 3986 punctuation).
func plainPath(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/-._~!$&'*+,;=:@%", c) >= 0) {
			return false
		}
	}
	return true
}

// maxRaised bounds the requests a ToolEffect keeps.
const maxRaised = 20

// unsafeUses keeps the request uses that can send an unsafe method.
func unsafeUses(uses []steps.Use) []steps.Use {
	var out []steps.Use
	for _, u := range uses {
		if u.Unsafe() {
			out = append(out, u)
		}
	}
	return out
}

// EffectOf computes a tool's effect from its declared effect and its
// unsafe requests; cat marks the query endpoints.
func EffectOf(declared manifest.Effect, unsafe []steps.Use, cat proxy.Catalogue) ToolEffect {
	e := ToolEffect{Declared: declared, Effective: declared}
	if declared.Rank() >= manifest.Write.Rank() {
		return e
	}
	for _, u := range unsafe {
		if !u.Unsafe() || u.Service != "" && cat.IsQueryPath(u.Service, u.Path, u.PathLiteral) {
			continue
		}
		e.Effective = manifest.Write
		if len(e.Raised) < maxRaised {
			e.Raised = append(e.Raised, u)
		}
	}
	return e
}

// Effects returns every tool's effect (each tool of the document, also one
// whose steps did not compile, as far as they were read), by name; cat
// marks the query endpoints (nil: none).
func (p *Program) Effects(cat proxy.Catalogue) map[string]ToolEffect {
	out := make(map[string]ToolEffect, len(p.Plugin.Tools))
	for _, t := range p.Plugin.Tools {
		out[t.Name] = EffectOf(t.Effect, p.unsafe[t.Name], cat)
	}
	return out
}

// Effects compiles p with the default options and returns each tool's
// effect, as Program.Effects does. A host, the registry and the review
// sheet use it with the built-in catalogue.
func Effects(p *manifest.Plugin, cat proxy.Catalogue) map[string]ToolEffect {
	prog, _ := Compile(p)
	return prog.Effects(cat)
}

// Uses lists every use of declared access a tool's steps make (campus
// services, web origins, abilities), in step order, as far as its steps
// were read (also for a tool whose steps did not compile).
func (p *Program) Uses(tool string) []steps.Use { return p.all[tool] }
