package remote

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/pkuinfo/harness/fetch"
)

// CheckURL holds a remote plugin's URL to the web rules: https, or http to a
// loopback host; no user name; never a campus host. Names are checked again
// when dialled (NewHTTPClient). It sends nothing.
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
	case host == "pku.edu.cn" || strings.HasSuffix(host, ".pku.edu.cn"):
		return nil, fmt.Errorf("%s is a campus host: a remote plugin has no campus session and may not reach campus services", host)
	}
	loop := fetch.IsLoopbackHost(host)
	if u.Scheme == "http" && !loop {
		return nil, fmt.Errorf("%s: plain http is only for loopback addresses; use https", cut(raw, 100))
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && !loop {
		if err := fetch.DeniedAddr(ip); err != nil {
			return nil, fmt.Errorf("%s: %v", cut(raw, 100), err)
		}
	}
	return u, nil
}

// NewHTTPClient is the client for a remote plugin at u: a loopback URL may
// reach only loopback; any other connection must go to a public address.
func NewHTTPClient(u *url.URL) *http.Client {
	loop := fetch.IsLoopbackHost(u.Hostname())
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
		return fetch.DeniedAddr(ip)
	}}
	return &http.Client{Transport: &http.Transport{
		Proxy: nil, DialContext: d.DialContext, ForceAttemptHTTP2: true,
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
