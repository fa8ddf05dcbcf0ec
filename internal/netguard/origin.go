package netguard

import (
	"net/url"
	"strings"
)

// SameOrigin reports whether a and b are one origin: the same scheme, the
// same canonical host (CanonicalHost: letter case and an internationalised
// name's forms are one host; a host it refuses is no origin) and the same
// port, the scheme's default port (80, 443) counting as written.
func SameOrigin(a, b *url.URL) bool {
	if a == nil || b == nil || !strings.EqualFold(a.Scheme, b.Scheme) {
		return false
	}
	ha, err := CanonicalHost(strings.Trim(a.Hostname(), "[]"))
	if err != nil {
		return false
	}
	hb, err := CanonicalHost(strings.Trim(b.Hostname(), "[]"))
	if err != nil {
		return false
	}
	return ha == hb && originPort(a) == originPort(b)
}

// originPort is u's port, or its scheme's default one.
func originPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}
