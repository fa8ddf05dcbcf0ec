package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/pkuinfo/harness/internal/netguard"
)

// The address rule for URL documents is the proxy's (internal/netguard):
// only public unicast addresses, whatever the port, and never a campus
// host or an address of the campus network: campus services trust a
// request for its origin, and the fetcher runs with the user's network
// position. A link that names a loopback host explicitly (for local
// testing) may reach loopback, and only that origin.

// DeniedAddr reports why ip may not be dialled for a URL document:
// loopback, private, link-local, multicast, the other special ranges and
// the campus networks are denied. It returns nil for a public address.
func DeniedAddr(ip netip.Addr) error {
	return deniedAddr(netguard.Default, ip)
}

func deniedAddr(g *netguard.Guard, ip netip.Addr) error {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return errors.New("invalid address")
	}
	if g.IsCampusAddr(ip) {
		return fmt.Errorf("address %s is an address of the campus network, which a document is never fetched from", ip)
	}
	if err := g.CheckAddr(ip); err != nil {
		return fmt.Errorf("address %s is not a public address", ip)
	}
	return nil
}

// IsLoopbackHost reports whether host (a name or an IP literal, brackets
// allowed) is a loopback address or "localhost".
func IsLoopbackHost(host string) bool { return netguard.IsLoopbackHost(host) }

// ErrRedirect is wrapped by a refused redirect.
var ErrRedirect = errors.New("redirect refused")

// maxRedirects bounds the redirects followed for a URL document.
const maxRedirects = 5

// checkCampusHost refuses a URL document on a campus host (pku.edu.cn and
// every name under it, an address of the campus network) before anything
// is sent.
func checkCampusHost(g *netguard.Guard, u *url.URL) error {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(u.Hostname(), "[]")), ".")
	if netguard.IsCampusDomain(h) {
		return refusedErr("%s is a campus host; a document is never fetched from the campus network", h)
	}
	if ip, err := netip.ParseAddr(h); err == nil && g.IsCampusAddr(ip) {
		return refusedErr("%s is an address of the campus network; a document is never fetched from it", h)
	}
	return nil
}

// guardedClient is the HTTP client for URL documents whose first request goes
// to origin. When origin is a loopback host, only that origin may be reached;
// otherwise every connection's address must be public and outside the
// campus networks.
func guardedClient(origin *url.URL, timeout time.Duration, g *netguard.Guard) *http.Client {
	loopback := IsLoopbackHost(origin.Hostname())
	dialer := &net.Dialer{
		Timeout: 10 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			return dialDecision(g, loopback, address)
		},
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 64 << 10,
		DisableCompression:     false,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if err := checkRedirectCount(via); err != nil {
				return err
			}
			return checkRedirect(g, origin, req.URL)
		},
	}
}

// checkRedirectCount bounds the redirects of one fetch (maxRedirects), for
// URL documents and git alike.
func checkRedirectCount(via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrRedirect, maxRedirects)
	}
	return nil
}

// CheckGitRedirect decides whether a git request first sent to origin may
// follow a redirect to target: only within that origin
// (netguard.SameOrigin), and never to a URL with a user name. It sends
// nothing.
//
// This is deliberately narrower than a URL document's rule (CheckRedirect,
// which follows a public link to any https URL of a public host): a GitHub
// link names a repository on github.com (or on HARNESS_GIT_BASE), its trust
// is read from that link (official only for the official repository), and
// its packs must come from there; GitHub's own redirects (a renamed
// repository) stay on its origin. For the same reason the git client has
// no address guard on its dialer: its one origin is fixed by the program
// (https://github.com) or by the user (HARNESS_GIT_BASE, a loopback git
// server in tests), never by a document, and a redirect cannot leave it.
// It is the rule CheckRedirect applies to a loopback link.
func CheckGitRedirect(origin, target *url.URL) error {
	if target.User != nil {
		return fmt.Errorf("%w: to a URL with a user name", ErrRedirect)
	}
	if !netguard.SameOrigin(origin, target) {
		return fmt.Errorf("%w: git redirect from %s://%s to another origin %s://%s", ErrRedirect, origin.Scheme, origin.Host, target.Scheme, target.Host)
	}
	return nil
}

// dialDecision is the guarded dialer's check of one connection's address:
// from a loopback origin only loopback, else deniedAddr.
func dialDecision(g *netguard.Guard, loopback bool, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %v", address, err)
	}
	ip := ap.Addr().Unmap()
	if loopback {
		if !ip.IsLoopback() {
			return fmt.Errorf("dial %s: a loopback link may reach only loopback", address)
		}
		return nil
	}
	return deniedAddr(g, ip)
}

// CheckRedirect decides whether a URL document first requested at origin may
// follow a redirect to target. From a loopback origin only the same origin is
// reachable; from a public origin, only https URLs whose host is not a
// loopback name, a campus host or a non-public or campus address literal
// (names are checked again when dialled). It sends nothing.
func CheckRedirect(origin, target *url.URL) error {
	return checkRedirect(netguard.Default, origin, target)
}

func checkRedirect(g *netguard.Guard, origin, target *url.URL) error {
	if target.User != nil {
		return fmt.Errorf("%w: to a URL with a user name", ErrRedirect)
	}
	host := target.Hostname()
	if IsLoopbackHost(origin.Hostname()) {
		if !netguard.SameOrigin(origin, target) {
			return fmt.Errorf("%w: from the loopback origin %s to another origin %s://%s", ErrRedirect, origin.Host, target.Scheme, target.Host)
		}
		return nil
	}
	if target.Scheme != "https" {
		return fmt.Errorf("%w: to %s:// (only https)", ErrRedirect, target.Scheme)
	}
	if IsLoopbackHost(host) {
		return fmt.Errorf("%w: to the loopback host %s", ErrRedirect, host)
	}
	if err := checkCampusHost(g, target); err != nil {
		return fmt.Errorf("%w: to %v", ErrRedirect, err)
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if err := deniedAddr(g, ip); err != nil {
			return fmt.Errorf("%w: to %v", ErrRedirect, err)
		}
	}
	return nil
}

// withDeadline applies d to ctx unless d is zero.
func withDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
