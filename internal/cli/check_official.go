package cli

import (
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
)

// checkOfficial holds the checks that apply to an official document only
// (`harness lint --trust official`): a community document's results are
// untrusted whatever it says, an official one's only when a tool says so.
func checkOfficial(p *manifest.Plugin) diag.List {
	var l diag.List
	if p == nil {
		return l
	}
	prog, _ := interpreter.Compile(p)
	warnUntrustedHTML(p, prog, &l)
	return l
}

// warnUntrustedHTML warns for an official tool that returns text extracted
// from a page (an html step) without untrusted: true. The reference:
// untrusted means third-party text, "such as forum posts, notices or event
// descriptions", which is what pages carry; unmarked, that text never
// taints the turn and a later automatic write runs unasked.
func warnUntrustedHTML(p *manifest.Plugin, prog *interpreter.Program, l *diag.List) {
	for _, t := range p.Tools {
		if t.Untrusted {
			continue
		}
		for _, k := range prog.Steps(t.Name) {
			if k.Kind == "html" {
				l.Warnf(t.Pos, "tool %s returns text extracted from HTML (step at %s) but is not marked untrusted: true; "+
					"an official tool whose result carries third-party text (notices, posts, event descriptions) must say so, "+
					"or that text never taints the turn", t.Name, k.Pos)
				break
			}
		}
	}
}
