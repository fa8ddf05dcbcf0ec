package netguard

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// ParseResolve checks one --resolve mapping, HOST:PORT to ADDR (an IP
// address, bracketed or not for IPv6, or IP:PORT to connect to another
// port), and returns the canonical "host:port" key and the "ip:port" to
// connect to.
func ParseResolve(hostport, addr string) (string, string, error) {
	h, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", "", fmt.Errorf("resolve %q: want HOST:PORT", hostport)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", "", fmt.Errorf("resolve %q: bad port", hostport)
	}
	host, err := CanonicalHost(h)
	if err != nil {
		return "", "", fmt.Errorf("resolve %q: %v", hostport, err)
	}
	a := strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
	if ip, err := netip.ParseAddr(a); err == nil {
		return JoinHostPort(host, port), netip.AddrPortFrom(ip, uint16(port)).String(), nil
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("resolve %q: address %q is not an IP address or IP:PORT", hostport, addr)
	}
	return JoinHostPort(host, port), ap.String(), nil
}

// ParseResolveFlag reads a --resolve value, HOST:PORT:ADDR as curl writes
// it (HOST and ADDR may be [IPv6]; ADDR an IP or IP:PORT), and returns the
// mapping's key and value as ParseResolve does.
func ParseResolveFlag(s string) (string, string, error) {
	var host, rest string
	if strings.HasPrefix(s, "[") {
		i := strings.Index(s, "]:")
		if i < 0 {
			return "", "", fmt.Errorf("resolve %q: want HOST:PORT:ADDR", s)
		}
		host, rest = s[1:i], s[i+2:]
	} else {
		var ok bool
		host, rest, ok = strings.Cut(s, ":")
		if !ok {
			return "", "", fmt.Errorf("resolve %q: want HOST:PORT:ADDR", s)
		}
	}
	port, addr, ok := strings.Cut(rest, ":")
	if !ok || port == "" || addr == "" {
		return "", "", fmt.Errorf("resolve %q: want HOST:PORT:ADDR", s)
	}
	return ParseResolve(net.JoinHostPort(host, port), addr)
}

// ParseResolveFlags reads every --resolve value into one map (nil for
// none).
func ParseResolveFlags(list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(list))
	for _, e := range list {
		k, v, err := ParseResolveFlag(e)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}
