package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config sets up a Proxy.
type Config struct {
	// Catalogue is the campus services (nil: Builtin()).
	Catalogue Catalogue
	// Keystore holds the sessions (nil: an empty one).
	Keystore Keystore
	// Resolve maps "host:port" to an address ("ip" or "ip:port") to
	// connect to instead, as curl --resolve does. It is the only way a web
	// request reaches a loopback or private address, and only for that
	// host:port.
	Resolve map[string]string
	// Limits bound requests and calls; zero fields take the defaults.
	Limits Limits
}

// Proxy signs and guards every request of every tool call. It is safe for
// concurrent use; it opens no listening socket.
type Proxy struct {
	services    map[string]*service
	serviceErr  map[string]error
	keys        Keystore
	resolve     map[string]string // canonical host:port -> ip:port
	lim         Limits
	red         *redactor
	campusHosts map[string]bool // host names, and host:port of loopback entries
	authHeaders map[string]bool // every catalogue auth and CSRF header (canonical)

	campusRT http.RoundTripper // credentialed requests
	webRT    http.RoundTripper // public requests, behind the guard

	semMu sync.Mutex
	sems  map[string]chan struct{}

	now func() time.Time
}

// New builds a proxy. Catalogue entries that fail validation are kept as
// errors: a request to such a service fails with that error.
func New(cfg Config) *Proxy {
	cat := cfg.Catalogue
	if cat == nil {
		cat = Builtin()
	}
	ks := cfg.Keystore
	if ks == nil {
		ks = MemKeystore(nil)
	}
	p := &Proxy{
		services:    map[string]*service{},
		serviceErr:  map[string]error{},
		keys:        ks,
		resolve:     map[string]string{},
		lim:         cfg.Limits.withDefaults(),
		red:         newRedactor(),
		campusHosts: map[string]bool{},
		authHeaders: map[string]bool{},
		sems:        map[string]chan struct{}{},
		now:         time.Now,
	}
	for name, s := range cat {
		cs, err := compileService(name, s)
		if err != nil {
			p.serviceErr[name] = err
			if o, err := parseOrigin(s.Origin); err == nil {
				p.addCampusHost(o)
			}
			continue
		}
		n := cs.Concurrency
		if n <= 0 {
			n = p.lim.ServiceConcurrency
		}
		cs.sem = make(chan struct{}, n)
		p.services[name] = cs
		p.addCampusHost(cs.origin)
		for _, h := range cs.headers {
			p.authHeaders[h] = true
		}
		if s.CSRF.Header != "" {
			p.authHeaders[canonicalKey(s.CSRF.Header)] = true
		}
	}
	for k, v := range cfg.Resolve {
		hp, addr, err := parseResolve(k, v)
		if err == nil {
			p.resolve[hp] = addr
		}
	}
	// Every stored value is redacted from the start, whichever service
	// it belongs to.
	if l, ok := ks.(serviceLister); ok {
		for _, name := range l.Services() {
			if ss, ok := ks.Get(name); ok {
				p.addSecrets(ss)
			}
		}
	}
	p.campusRT = p.newTransport(p.dialCampus)
	p.webRT = p.newTransport(p.dialWeb)
	return p
}

func (p *Proxy) addCampusHost(o origin) {
	if isLoopbackHost(o.host) {
		p.campusHosts[o.hostport()] = true
		return
	}
	p.campusHosts[o.host] = true
}

// isCampusHost reports whether a web request to host:port would reach a
// campus service: a catalogue host (host:port for loopback entries), or
// pku.edu.cn and every name under it.
func (p *Proxy) isCampusHost(host string, port int) bool {
	return isCampusDomain(host) || p.campusHosts[host] || p.campusHosts[joinHostPort(host, port)]
}

func (p *Proxy) addSecrets(ss *ServiceSecrets) {
	if ss == nil {
		return
	}
	// One rebuild of the redactor's patterns for the whole session.
	vs := make([]string, 0, len(ss.Cookies)+len(ss.Headers))
	for _, v := range ss.Cookies {
		vs = append(vs, v)
	}
	more := cookieForms(nil, vs)
	for _, v := range ss.Headers {
		vs = append(vs, v)
	}
	p.red.addAll(vs, more)
}

// ParseResolveFlag reads a --resolve value, HOST:PORT:ADDR as curl writes
// it (ADDR an IP address, bracketed or not for IPv6, or IP:PORT to connect
// to another port), and returns the Config.Resolve key and value.
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
	if !ok || addr == "" {
		return "", "", fmt.Errorf("resolve %q: want HOST:PORT:ADDR", s)
	}
	return parseResolve(joinHostPort(host, atoiOr(port, -1)), addr)
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

// ParseResolve checks one --resolve mapping: HOST:PORT to ADDR (an IP
// address, or IP:PORT). It returns the canonical key and address.
func ParseResolve(hostport, addr string) (string, string, error) {
	return parseResolve(hostport, addr)
}

func parseResolve(hostport, addr string) (string, string, error) {
	h, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", "", fmt.Errorf("resolve %q: want HOST:PORT", hostport)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", "", fmt.Errorf("resolve %q: bad port", hostport)
	}
	host, err := canonicalHost(h)
	if err != nil {
		return "", "", fmt.Errorf("resolve %q: %v", hostport, err)
	}
	a := strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
	if ip, err := netip.ParseAddr(a); err == nil {
		return joinHostPort(host, port), netip.AddrPortFrom(ip, uint16(port)).String(), nil
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("resolve %q: address %q is not an IP address or IP:PORT", hostport, addr)
	}
	return joinHostPort(host, port), ap.String(), nil
}

func (p *Proxy) newTransport(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	protos := new(http.Protocols)
	protos.SetHTTP1(true) // HTTP/1.1 only: the card service refuses HTTP/2
	return &http.Transport{
		Proxy:                  nil, // never an environment proxy
		DialContext:            dial,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		DisableCompression:     true, // the proxy decompresses, within its limit
		MaxResponseHeaderBytes: p.lim.MaxHeaderBytes,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
		Protocols:              protos,
	}
}

var dialer = &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}

// dialCampus connects to a catalogue origin (or its --resolve mapping).
func (p *Proxy) dialCampus(ctx context.Context, network, addr string) (net.Conn, error) {
	if a, ok := p.resolve[addr]; ok {
		return dialer.DialContext(ctx, network, a)
	}
	return dialer.DialContext(ctx, network, addr)
}

// guardedDialer checks every address it connects to, after resolution.
var guardedDialer = &net.Dialer{
	Timeout:   10 * time.Second,
	KeepAlive: 30 * time.Second,
	Control:   guardControl,
}

func guardControl(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("%w: network %s", ErrRefused, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse %s", ErrRefused, address)
	}
	return checkAddr(ap.Addr())
}

// dialWeb connects a web request: a --resolve mapping for exactly this
// host:port, or every resolved address checked by the guard (any refused
// address refuses the request: a mixed answer is a rebinding attempt), and
// each connection checked again in the dialer's Control.
func (p *Proxy) dialWeb(ctx context.Context, network, addr string) (net.Conn, error) {
	if a, ok := p.resolve[addr]; ok {
		return dialer.DialContext(ctx, network, a)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: bad address %s", ErrRefused, addr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ips, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("cannot resolve %s: %v", host, err)
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("cannot resolve %s: no address", host)
	}
	for _, ip := range ips {
		if err := checkAddr(ip); err != nil {
			return nil, err
		}
	}
	var last error
	for _, ip := range ips {
		c, err := guardedDialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

// sem returns the semaphore of a service or web origin.
func (p *Proxy) sem(key string, n int) chan struct{} {
	p.semMu.Lock()
	defer p.semMu.Unlock()
	s, ok := p.sems[key]
	if !ok {
		s = make(chan struct{}, n)
		p.sems[key] = s
	}
	return s
}

func acquire(ctx context.Context, s chan struct{}) error {
	select {
	case s <- struct{}{}:
		return nil
	default:
	}
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// canonicalKey is http.CanonicalHeaderKey.
func canonicalKey(k string) string { return http.CanonicalHeaderKey(k) }
