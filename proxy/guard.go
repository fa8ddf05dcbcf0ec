package proxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"code.dny.dev/ssrf"
	"golang.org/x/net/idna"
)

// ErrRefused marks a request the proxy refused by policy (a path, header,
// origin or address it does not allow). Test with errors.Is.
var ErrRefused = errors.New("refused by the proxy")

// ErrLimit marks a request stopped by one of the Limits.
var ErrLimit = errors.New("over a proxy limit")

// guardian decides which resolved addresses a web request may connect to:
// code.dny.dev/ssrf's deny lists (the IANA special-purpose registries for
// IPv4; for IPv6 everything outside 2000::/3, which covers loopback,
// unspecified, link-local, unique-local, multicast, IPv4-mapped and NAT64,
// plus the special ranges inside it). Ports are checked per origin, not here.
var guardian = ssrf.New(ssrf.WithAnyPort(), ssrf.WithNetworks("tcp4", "tcp6"))

// campusNetworks are the university's own address blocks. A device on the
// campus network is trusted by campus services for its address, so a web
// request (which names a public origin) may not reach them, whatever name
// resolves there: campus hosts are reached only as declared campus services.
var campusNetworks = []netip.Prefix{
	netip.MustParsePrefix("162.105.0.0/16"), // Peking University's long-standing block
}

// checkAddr is the guard's decision for one resolved address: nil when a web
// request may connect to it. It never dials.
func checkAddr(a netip.Addr) error {
	if !a.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrRefused)
	}
	if a.Zone() != "" {
		return fmt.Errorf("%w: address %s has a zone", ErrRefused, a)
	}
	if err := guardian.SafeAddr(a); err != nil {
		return fmt.Errorf("%w: web requests may not reach %s (loopback, private or special-purpose address)", ErrRefused, a)
	}
	u := a.Unmap()
	for _, p := range campusNetworks {
		if p.Contains(u) {
			return fmt.Errorf("%w: web requests may not reach %s, an address of the campus network (campus services are reached only as declared services)", ErrRefused, a)
		}
	}
	// Belt and braces: the standard library's own classification.
	if u.IsLoopback() || u.IsPrivate() || u.IsLinkLocalUnicast() || u.IsLinkLocalMulticast() ||
		u.IsMulticast() || u.IsUnspecified() || u.IsInterfaceLocalMulticast() {
		return fmt.Errorf("%w: web requests may not reach %s (loopback, private or special-purpose address)", ErrRefused, a)
	}
	return nil
}

// canonicalHost lower-cases a host, converts an internationalised name to
// its ASCII form and refuses what some resolver could read as another
// address: numeric-looking names that are not canonical dotted quads
// (2130706433, 0x7f.1, 127.1, 017.0.0.1), IPv6 zones, a trailing dot.
func canonicalHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("empty host")
	}
	if strings.IndexByte(h, ':') >= 0 {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", fmt.Errorf("host %q is not a valid IPv6 address", h)
		}
		return a.String(), nil
	}
	if strings.HasSuffix(h, ".") {
		return "", fmt.Errorf("host %q ends with a dot", h)
	}
	ascii := true
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if !ascii {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("host %q is not a valid name", h)
		}
		h = a
	}
	h = strings.ToLower(h)
	if len(h) > 253 {
		return "", errors.New("host name too long")
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", fmt.Errorf("host %q has a character not allowed in a host name", h)
		}
	}
	if strings.Contains(h, "..") || strings.HasPrefix(h, ".") {
		return "", fmt.Errorf("host %q has an empty label", h)
	}
	if looksNumeric(h) {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is4() || a.String() != h {
			return "", fmt.Errorf("host %q looks like a number but is not a canonical dotted-quad address", h)
		}
	}
	return h, nil
}

// looksNumeric follows the URL standard's "ends in a number": the last label
// is all digits, or 0x followed by hex digits.
func looksNumeric(h string) bool {
	last := h
	if i := strings.LastIndexByte(h, '.'); i >= 0 {
		last = h[i+1:]
	}
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		for i := 2; i < len(last); i++ {
			c := last[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			return false
		}
	}
	return true
}

// isCampusDomain reports whether host is pku.edu.cn or under it.
func isCampusDomain(host string) bool {
	return host == "pku.edu.cn" || strings.HasSuffix(host, ".pku.edu.cn")
}

// reservedHeader reports whether a step may never set the (canonical)
// header: credentials, framing, hop-by-hop and address-forging headers, and
// those that servers and their front ends read as another path (which
// would leave the declared path prefixes) or another client address
// (campus services trust the campus network's).
func reservedHeader(k string) bool {
	switch k {
	case "Cookie", "Cookie2", "Authorization", "Proxy-Authorization", "Host",
		"Accept-Encoding", "Content-Length", "Transfer-Encoding", "Te", "Trailer",
		"Connection", "Keep-Alive", "Proxy-Connection", "Upgrade", "Expect",
		"Forwarded", "X-Real-Ip", "Via", "Http2-Settings", "Set-Cookie", "Set-Cookie2",
		"X-Original-Url", "X-Rewrite-Url", "X-Host", "X-Client-Ip", "Client-Ip", "True-Client-Ip",
		"X-Originating-Ip", "X-Remote-Ip", "X-Remote-Addr", "X-Cluster-Client-Ip",
		"Cf-Connecting-Ip", "Fastly-Client-Ip":
		return true
	}
	return strings.HasPrefix(k, "Proxy-") || strings.HasPrefix(k, "X-Forwarded-")
}

// strippedResponseHeader reports whether a (canonical) response header is
// removed before steps see it, whatever the service.
func strippedResponseHeader(k string) bool {
	switch k {
	case "Set-Cookie", "Set-Cookie2", "Authorization", "Proxy-Authorization", "Cookie":
		return true
	}
	return false
}
