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

	"code.dny.dev/ssrf"
)

// The address rule for URL documents is the proxy's: only public unicast
// addresses, whatever the port. A link that names a loopback host explicitly
// (for local testing) may reach loopback, and only that origin.
var guardian = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// DeniedAddr reports why ip may not be dialled for a URL document: loopback,
// private, link-local, multicast and the other special ranges are denied. It
// returns nil for a public address.
func DeniedAddr(ip netip.Addr) error {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return errors.New("invalid address")
	}
	if err := guardian.SafeAddr(ip); err != nil {
		return fmt.Errorf("address %s is not a public address", ip)
	}
	return nil
}

// ErrRedirect is wrapped by a refused redirect.
var ErrRedirect = errors.New("redirect refused")

// maxRedirects bounds the redirects followed for a URL document.
const maxRedirects = 5

// guardedClient is the HTTP client for URL documents whose first request goes
// to origin. When origin is a loopback host, only that origin may be reached;
// otherwise every connection's address must be public.
func guardedClient(origin *url.URL, timeout time.Duration) *http.Client {
	loopback := IsLoopbackHost(origin.Hostname())
	dialer := &net.Dialer{
		Timeout: 10 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
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
			return DeniedAddr(ip)
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
			if len(via) >= maxRedirects {
				return fmt.Errorf("%w: more than %d redirects", ErrRedirect, maxRedirects)
			}
			return CheckRedirect(origin, req.URL)
		},
	}
}

// CheckRedirect decides whether a URL document first requested at origin may
// follow a redirect to target. From a loopback origin only the same origin is
// reachable; from a public origin, only https URLs whose host is not a
// loopback name or a non-public address literal (names are checked again
// when dialled). It sends nothing.
func CheckRedirect(origin, target *url.URL) error {
	if target.User != nil {
		return fmt.Errorf("%w: to a URL with a user name", ErrRedirect)
	}
	host := target.Hostname()
	if IsLoopbackHost(origin.Hostname()) {
		if !strings.EqualFold(target.Scheme, origin.Scheme) || !strings.EqualFold(target.Host, origin.Host) {
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
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if err := DeniedAddr(ip); err != nil {
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
