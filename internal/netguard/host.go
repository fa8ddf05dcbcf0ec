package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// CanonicalHost lower-cases a host, converts an internationalised name to
// its ASCII form and refuses what some resolver could read as another
// address: numeric-looking names that are not canonical dotted quads
// (2130706433, 0x7f.1, 127.1, 017.0.0.1), IPv6 zones, a trailing dot.
// IPv6 addresses come back without brackets, in their canonical form.
func CanonicalHost(h string) (string, error) {
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

// looksNumeric follows the URL standard's "ends in a number": the last
// label is all digits, or 0x followed by hex digits.
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

// IsLoopbackHost reports whether host (a name or an IP literal, brackets
// and letter case allowed) is "localhost" or a loopback address.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// JoinHostPort is host:port, with an IPv6 host in brackets.
func JoinHostPort(host string, port int) string {
	if strings.IndexByte(host, ':') >= 0 {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}
