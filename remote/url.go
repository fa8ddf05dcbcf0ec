package remote

import (
	"context"
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

// CheckURL holds a remote plugin's URL to the web rules: https, or http to a
// loopback host; no user name; never a campus host or campus address, nor a
// private address literal. Names are checked again when dialled
// (NewHTTPClient). It sends nothing.
func CheckURL(raw string) (*url.URL, error) {
	if len(raw) > 2048 {
		return nil, fmt.Errorf("the URL is longer than 2048 bytes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %v", cut(raw, 100), err)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, fmt.Errorf("%s: a remote plugin's URL must be https (or http to a loopback address)", cut(raw, 100))
	case host == "":
		return nil, fmt.Errorf("%s has no host", cut(raw, 100))
	case u.User != nil:
		return nil, fmt.Errorf("%s holds a user name or password: put a token in a file and pass --token-file", u.Redacted())
	case u.Fragment != "" || u.Opaque != "":
		return nil, fmt.Errorf("%s: a remote plugin's URL may not have a fragment", cut(raw, 100))
	case netguard.IsCampusDomain(host):
		return nil, fmt.Errorf("%s is a campus host: a remote plugin has no campus session and may not reach campus services", host)
	}
	loop := netguard.IsLoopbackHost(host)
	if u.Scheme == "http" && !loop {
		return nil, fmt.Errorf("%s: plain http is only for loopback addresses; use https", cut(raw, 100))
	}
	if err := netguard.Default.CheckHost(host, loop); err != nil {
		return nil, fmt.Errorf("%s: %v", cut(raw, 100), err)
	}
	return u, nil
}

// NewHTTPClient is the client for a remote plugin at u: a loopback URL may
// reach only loopback; any other connection must go to a public address
// outside the campus networks. resolve maps HOST:PORT to the ADDR to dial
// instead (as curl's --resolve), the only way to reach another address: the
// user named it.
func NewHTTPClient(u *url.URL, resolve map[string]string) *http.Client {
	loop := netguard.IsLoopbackHost(u.Hostname())
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("dial %s: %v", address, err)
		}
		ip := ap.Addr().Unmap()
		if loop {
			if !ip.IsLoopback() {
				return fmt.Errorf("dial %s: a loopback URL may reach only loopback", address)
			}
			return nil
		}
		return netguard.Default.CheckAddr(ip)
	}}
	mapped := &net.Dialer{Timeout: 10 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := resolve[strings.ToLower(addr)]; ok {
			return mapped.DialContext(ctx, network, to)
		}
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: &http.Transport{
		Proxy: nil, DialContext: dial, ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second,
	}}
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// originOf is scheme://host[:port], lower-cased.
func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme + "://" + u.Host)
}
