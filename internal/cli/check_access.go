package cli

import (
	"slices"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
)

func init() { validChecks = append(validChecks, checkAccess) }

// checkAccess is warnAccess on a valid document.
func checkAccess(p *manifest.Plugin) diag.List {
	var l diag.List
	if p == nil {
		return l
	}
	cat := proxy.Builtin()
	prog, cl := interpreter.Compile(p, interpreter.WithAuthHeaders(authHeaders(cat)))
	if cl.HasErrors() {
		return l
	}
	warnAccess(p, prog, cat, &l)
	return l
}

// stepAbilities are the abilities a step kind can use (kv_get, kv_set).
// The others (notifications, calendar, ...) are the host's, used outside
// the steps, so declaring one is not a slip lint can see.
var stepAbilities = []string{"kv"}

// warnAccess warns, once the steps compile, about declared access that
// looks like a slip: a campus service the built-in catalogue does not know
// but one of its names is close to ("did you mean": a host may know more
// services, so it is only a warning), and a declared service, web origin or step
// ability that no step uses (access the review sheet shows the user for
// nothing).
func warnAccess(p *manifest.Plugin, prog *interpreter.Program, cat proxy.Catalogue, l *diag.List) {
	names := cat.Names()
	for _, ca := range p.Access.Campus {
		if _, ok := cat[ca.Service]; ok {
			continue
		}
		// A name far from every catalogued one is a service of another
		// host's catalogue (--services): no warning.
		if s := yamlx.Suggest(ca.Service, names); s != "" {
			l.Warnf(ca.Pos, "campus service %q is not in the built-in catalogue: did you mean %q?", ca.Service, s)
		}
	}
	services, origins, abilities := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, t := range p.Tools {
		for _, u := range prog.Uses(t.Name) {
			switch {
			case u.Service != "":
				services[u.Service] = true
			case u.Origin != "":
				origins[u.Origin] = true
			case u.Ability != "":
				abilities[u.Ability] = true
			}
		}
	}
	for _, ca := range p.Access.Campus {
		if !services[ca.Service] {
			l.Warnf(ca.Pos, "access.campus declares %s, but no step sends a request to it: remove it, or the review sheet asks the user for access the document never uses", ca.Service)
		}
	}
	for _, o := range p.Access.Web {
		if !origins[o.String()] {
			l.Warnf(o.Pos, "access.web declares %s, but no step sends a request to it: remove it, or the review sheet asks the user for access the document never uses", o.String())
		}
	}
	for _, a := range p.Access.Abilities {
		if slices.Contains(stepAbilities, a) && !abilities[a] {
			pos := p.KeyPos["access"]
			l.Warnf(pos, "access.abilities declares %s, but no step uses it (kv_get, kv_set): remove it, or the review sheet asks the user for access the document never uses", a)
		}
	}
}
