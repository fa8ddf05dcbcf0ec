package review

import (
	"net/netip"
	"sort"
	"strings"

	"github.com/pkuinfo/harness/manifest"
)

// access is a document's declared access after normalisation: lower-case
// names, clean path prefixes with the covered ones dropped ("/" for a
// service without paths), origins with their default ports, no duplicates.
type access struct {
	campus    map[string][]string // service -> minimal prefix set
	web       []origin            // sorted, deduplicated
	abilities map[string]bool
	requires  map[string]bool
}

// origin is a normalised web origin. A host "*.example.edu.cn" stands for
// every subdomain of example.edu.cn (a pattern the format may allow later).
type origin struct {
	scheme string
	host   string
	port   int
}

func (o origin) String() string {
	return manifest.Origin{Scheme: o.scheme, Host: o.host, Port: o.port}.String()
}

func normalizeAccess(p *manifest.Plugin) access {
	a := access{campus: map[string][]string{}, abilities: map[string]bool{}, requires: map[string]bool{}}
	if p == nil {
		return a
	}
	for _, c := range p.Access.Campus {
		name := normName(c.Service)
		if name == "" {
			continue
		}
		var prefixes []string
		if len(c.Paths) == 0 {
			prefixes = []string{"/"}
		} else {
			for _, q := range c.Paths {
				prefixes = append(prefixes, normPath(q))
			}
		}
		a.campus[name] = minimalPrefixes(append(a.campus[name], prefixes...))
	}
	seen := map[origin]bool{}
	for _, o := range p.Access.Web {
		n := normOrigin(o)
		if n.host == "" || seen[n] {
			continue
		}
		seen[n] = true
		a.web = append(a.web, n)
	}
	sort.Slice(a.web, func(i, j int) bool { return a.web[i].String() < a.web[j].String() })
	for _, s := range p.Access.Abilities {
		if s = normName(s); s != "" {
			a.abilities[s] = true
		}
	}
	for _, s := range p.Requires {
		if s = normName(s); s != "" {
			a.requires[s] = true
		}
	}
	return a
}

// normName lower-cases and trims a name (service, ability, capability).
func normName(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// normPath cleans a path prefix: a leading "/", no empty or "." segments,
// ".." resolved (never above the root), the trailing "/" kept. Case is kept:
// servers may tell "/API/" from "/api/".
func normPath(p string) string {
	p = strings.TrimSpace(p)
	trailing := p == "" || strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") || p == "." || p == ".."
	var out []string
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, seg)
		}
	}
	s := "/" + strings.Join(out, "/")
	if trailing && s != "/" {
		s += "/"
	}
	return s
}

// prefixCovers reports whether every path the prefix q admits is also
// admitted by p. A prefix ending in "/" admits the paths starting with it; one
// without admits itself and the paths under it (the proxy's rule). Under that
// rule q is covered exactly when q itself is a path p admits.
func prefixCovers(p, q string) bool {
	if strings.HasSuffix(p, "/") {
		return strings.HasPrefix(q, p)
	}
	return q == p || strings.HasPrefix(q, p+"/")
}

// coveredBy reports whether q is covered by one of the prefixes.
func coveredBy(prefixes []string, q string) bool {
	for _, p := range prefixes {
		if prefixCovers(p, q) {
			return true
		}
	}
	return false
}

// minimalPrefixes drops duplicates and the prefixes another one covers, and
// sorts the rest.
func minimalPrefixes(in []string) []string {
	sort.Strings(in)
	var out []string
	for i, q := range in {
		if i > 0 && in[i-1] == q {
			continue
		}
		dropped := false
		for j, p := range in {
			if p != q && j != i && prefixCovers(p, q) {
				dropped = true
				break
			}
		}
		if !dropped {
			out = append(out, q)
		}
	}
	return out
}

// normOrigin lower-cases the scheme and host, drops trailing dots and IPv6
// brackets, writes an IPv6 address in its one canonical form, and fills in
// the scheme's default port.
func normOrigin(o manifest.Origin) origin {
	n := origin{
		scheme: strings.ToLower(strings.TrimSpace(o.Scheme)),
		host:   strings.TrimRight(strings.Trim(strings.ToLower(strings.TrimSpace(o.Host)), "[]"), "."),
		port:   o.Port,
	}
	if strings.Contains(n.host, ":") {
		// One IPv6 address, many spellings; the proxy compares the
		// address, so the diff does too.
		if a, err := netip.ParseAddr(n.host); err == nil && a.Zone() == "" {
			n.host = a.String()
		}
	}
	if n.port == 0 {
		switch n.scheme {
		case "https":
			n.port = 443
		case "http":
			n.port = 80
		}
	}
	return n
}

// originCovers reports whether old admits every request new admits: the
// same origin, a subdomain under a "*." pattern with the same scheme and
// port, or https on its default port where old allowed plain http on its
// default port to the same host (the same server, a safer channel).
func originCovers(old, n origin) bool {
	if old == n {
		return true
	}
	if old.port == n.port && old.scheme == n.scheme && strings.HasPrefix(old.host, "*.") {
		suffix := old.host[1:] // ".example.edu.cn"
		if strings.HasSuffix(n.host, suffix) && len(n.host) > len(suffix) {
			return true
		}
	}
	return old.scheme == "http" && old.port == 80 && n.scheme == "https" && n.port == 443 && old.host == n.host
}

func originCoveredBy(list []origin, n origin) bool {
	for _, o := range list {
		if originCovers(o, n) {
			return true
		}
	}
	return false
}

// modeRank orders permission modes by how much they let through; a missing
// mode is the host's default (read auto, the others ask).
func modeRank(m manifest.Mode, e manifest.Effect) int {
	switch m {
	case manifest.Off:
		return 0
	case manifest.Ask:
		return 1
	case manifest.Auto:
		return 2
	}
	if e == manifest.Read {
		return 2
	}
	return 1
}
