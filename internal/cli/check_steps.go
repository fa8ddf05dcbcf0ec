package cli

import (
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
)

// The step check: every tool's steps decode and compile (kinds, jq,
// selectors, templates), reach only what the document declares, and set no
// header of a built-in service's session.
func init() { documentChecks = append(documentChecks, checkSteps) }

func checkSteps(p *manifest.Plugin) diag.List {
	if p == nil {
		return diag.List{}
	}
	cat := proxy.Builtin()
	prog, l := interpreter.Compile(p, interpreter.WithAuthHeaders(authHeaders(cat)))
	warnEffects(p, prog, cat, &l)
	return l
}

// warnEffects tells the author of each tool that counts above its
// declared effect (a read tool whose step sends POST outside a query
// endpoint of the built-in catalogue), one warning per such request.
func warnEffects(p *manifest.Plugin, prog *interpreter.Program, cat proxy.Catalogue, l *diag.List) {
	effects := prog.Effects(cat)
	for _, t := range p.Tools {
		e := effects[t.Name]
		for _, u := range e.Raised {
			l.Warnf(t.Pos, "tool %s declares effect %s but step at %s sends %s; it will be treated as %s",
				t.Name, e.Declared, u.MethodPos, interpreter.SendWords(u), e.Effective)
		}
	}
}

// authHeaders returns each catalogue service's session and CSRF headers.
func authHeaders(cat proxy.Catalogue) func(string) []string {
	return func(service string) []string {
		s, ok := cat[service]
		if !ok || s == nil {
			return nil
		}
		out := append([]string(nil), s.Auth.Headers...)
		if s.CSRF.Header != "" {
			out = append(out, s.CSRF.Header)
		}
		return out
	}
}
