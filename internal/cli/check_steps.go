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
	_, l := interpreter.Compile(p, interpreter.WithAuthHeaders(authHeaders(proxy.Builtin())))
	return l
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
