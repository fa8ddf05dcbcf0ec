package proxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/pkuinfo/harness/internal/netguard"
)

// ErrRefused marks a request the proxy refused by policy (a path, header,
// origin or address it does not allow). Test with errors.Is.
var ErrRefused = errors.New("refused by the proxy")

// ErrLimit marks a request stopped by one of the Limits.
var ErrLimit = errors.New("over a proxy limit")

// checkAddr is the guard's decision for one resolved address: nil when a web
// request may connect to it (internal/netguard: public unicast only, never
// the campus networks of the catalogue). It never dials.
func (p *Proxy) checkAddr(a netip.Addr) error {
	if err := p.guard.CheckAddr(a); err != nil {
		return fmt.Errorf("%w: a web request may not connect there: %s", ErrRefused, strings.TrimPrefix(err.Error(), netguard.ErrDenied.Error()+": "))
	}
	return nil
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
