package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"code.dny.dev/ssrf"
)

// ErrDenied marks an address or host a public request may not reach.
var ErrDenied = errors.New("address not allowed")

// guardian holds code.dny.dev/ssrf's deny lists: the IANA special-purpose
// registries for IPv4; for IPv6 everything outside 2000::/3 (loopback,
// unspecified, link-local, unique-local, multicast, IPv4-mapped, NAT64)
// plus the special ranges inside it. Ports are the caller's business.
var guardian = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// CampusDomain is the university's DNS domain: it and every name under it
// are campus hosts.
const CampusDomain = "pku.edu.cn"

// DefaultCampusNetworks are the university's own address blocks that the
// engine knows without a catalogue: Peking University's long-standing
// 162.105.0.0/16. A device on the campus network is trusted by campus
// services for its address, so no public request may reach them.
func DefaultCampusNetworks() []netip.Prefix {
	return []netip.Prefix{netip.MustParsePrefix("162.105.0.0/16")}
}

// Guard is the address rule of public requests: only public unicast
// addresses, never an address of the campus network. The zero value is
// not useful; build one with New.
type Guard struct {
	campus []netip.Prefix
}

// New returns the guard of the default campus networks and extra ones (a
// host's catalogue may extend the campus, never shrink it).
func New(extra ...netip.Prefix) *Guard {
	g := &Guard{campus: DefaultCampusNetworks()}
	for _, p := range extra {
		p = p.Masked()
		if p.IsValid() && !slices.Contains(g.campus, p) {
			g.campus = append(g.campus, p)
		}
	}
	return g
}

// Default is the guard of the default campus networks.
var Default = New()

// CampusNetworks lists the guard's campus address blocks.
func (g *Guard) CampusNetworks() []netip.Prefix { return slices.Clone(g.campus) }

// IsCampusAddr reports whether a is in a campus network (IPv4-mapped
// addresses read as IPv4).
func (g *Guard) IsCampusAddr(a netip.Addr) bool {
	u := a.Unmap()
	for _, p := range g.campus {
		if p.Contains(u) {
			return true
		}
	}
	return false
}

// CheckAddr is the decision for one resolved address: nil when a public
// request may connect to it. It never dials.
func (g *Guard) CheckAddr(a netip.Addr) error {
	if !a.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrDenied)
	}
	if a.Zone() != "" {
		return fmt.Errorf("%w: address %s has a zone", ErrDenied, a)
	}
	if g.IsCampusAddr(a) {
		return fmt.Errorf("%w: %s is an address of the campus network (campus services are reached only as declared services)", ErrDenied, a)
	}
	if err := guardian.SafeAddr(a); err != nil {
		return fmt.Errorf("%w: %s is a loopback, private or special-purpose address", ErrDenied, a)
	}
	// Belt and braces: the standard library's own classification.
	u := a.Unmap()
	if u.IsLoopback() || u.IsPrivate() || u.IsLinkLocalUnicast() || u.IsLinkLocalMulticast() ||
		u.IsMulticast() || u.IsUnspecified() || u.IsInterfaceLocalMulticast() {
		return fmt.Errorf("%w: %s is a loopback, private or special-purpose address", ErrDenied, a)
	}
	return nil
}

// IsCampusDomain reports whether a (canonical) host is the campus domain or
// a name under it.
func IsCampusDomain(host string) bool {
	return host == CampusDomain || strings.HasSuffix(host, "."+CampusDomain)
}

// CheckHost is the decision for a host as a URL names it, before anything
// is resolved: a campus name, or an address literal CheckAddr refuses
// (loopback only where allowLoopback), is refused. Names are checked again
// when their addresses are dialled.
func (g *Guard) CheckHost(host string, allowLoopback bool) error {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if IsCampusDomain(h) {
		return fmt.Errorf("%w: %s is a campus host (campus services are reached only as declared services)", ErrDenied, h)
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if allowLoopback && a.Unmap().IsLoopback() {
			return nil
		}
		return g.CheckAddr(a)
	}
	return nil
}

// ParseNetworks reads CIDR prefixes ("162.105.0.0/16", "2001:da8:201::/48").
func ParseNetworks(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("network %q is not an address block such as 162.105.0.0/16", s)
		}
		if p.Addr().Zone() != "" {
			return nil, fmt.Errorf("network %q has a zone", s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
