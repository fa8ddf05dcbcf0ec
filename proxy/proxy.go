package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"github.com/pkuinfo/harness/internal/netguard"
	"net"
	"net/http"
	"net/netip"
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
	// RootCAs, when set, are the certificate authorities TLS connections
	// trust instead of the system's (a local HTTPS server behind
	// --resolve, the test runner's replay servers).
	RootCAs *x509.CertPool
	// ResolveCA is PEM certificates trusted, in addition to the system
	// roots (or RootCAs), for the hosts Resolve maps and for no other
	// host: a local HTTPS server standing in for a web origin.
	ResolveCA []byte
	// Sealed, when set, names a setting in which nothing leaves loopback
	// (the simulated campus: "the simulated campus (--campus)"): every
	// connection, campus or web, must go to a loopback address literal
	// after the Resolve mapping, no name is ever resolved, and a catalogue
	// service whose origin is not on loopback fails naming the service.
	Sealed string
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

	guard         *netguard.Guard // the address rule of web requests
	guardedDialer *net.Dialer     // checks every address it connects to
	sealed        string          // Config.Sealed
	resolveRoots  *x509.CertPool  // the roots plus Config.ResolveCA; nil without it
	// dial opens a connection to an address already decided on (a
	// --resolve target or a catalogue origin); tests replace it to see
	// that a refused connection never reaches the network.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	campusRT http.RoundTripper // credentialed requests
	webRT    http.RoundTripper // public requests, behind the guard

	semMu sync.Mutex
	sems  map[string]chan struct{}

	// public maps a campus service to the redactor state under which its
	// origin and fixed query hold no credential (see plainURL).
	public sync.Map // *service -> *redState

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
		sealed:      cfg.Sealed,
		dial:        dialer.DialContext,
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
		hp, addr, err := netguard.ParseResolve(k, v)
		if err == nil {
			p.resolve[hp] = addr
		}
	}
	if p.sealed != "" {
		p.sealServices()
	}
	if len(cfg.ResolveCA) > 0 {
		roots := cfg.RootCAs
		if roots != nil {
			roots = roots.Clone()
		} else if sys, err := x509.SystemCertPool(); err == nil && sys != nil {
			roots = sys
		} else {
			roots = x509.NewCertPool()
		}
		roots.AppendCertsFromPEM(cfg.ResolveCA)
		p.resolveRoots = roots
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
	// The login section's TOTP secret too: only the host's IAAA login
	// reads it, which no step reaches, but should any path ever carry it
	// to a step it is a credential like a session (defence in depth). A
	// base32 secret reads the same in either letter case.
	if l, ok := ks.(interface{ Login() LoginInfo }); ok {
		if v := l.Login().TOTP; checkSecretValue(v) == nil {
			var more []string
			for _, f := range []string{strings.ToUpper(v), strings.ToLower(v)} {
				if f != v && checkSecretValue(f) == nil {
					more = append(more, f)
				}
			}
			p.red.addAll([]string{v}, more)
		}
	}
	var nets []netip.Prefix
	for _, s := range cat {
		if s != nil {
			if ns, err := netguard.ParseNetworks(s.Networks); err == nil {
				nets = append(nets, ns...)
			}
		}
	}
	p.guard = netguard.New(nets...)
	p.guardedDialer = &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: p.guardControl}
	p.campusRT = p.newTransport(p.dialCampus, cfg.RootCAs)
	p.webRT = p.newTransport(p.dialWeb, cfg.RootCAs)
	return p
}

// sealServices turns every catalogue service whose connection would leave
// loopback (its origin, after the Resolve mapping) into an error naming
// the service: the sealed setting does not serve it.
func (p *Proxy) sealServices() {
	for name, cs := range p.services {
		target := cs.origin.hostport()
		if a, ok := p.resolve[target]; ok {
			target = a
		}
		if netguard.CheckSealedDial(target) == nil {
			continue
		}
		p.serviceErr[name] = fmt.Errorf("%w: campus service %q is not served by %s, which reaches nothing beyond loopback (its origin %s is not on loopback)", ErrRefused, name, p.sealed, cs.origin.str)
		delete(p.services, name)
	}
}

func (p *Proxy) addCampusHost(o origin) {
	if netguard.IsLoopbackHost(o.host) {
		p.campusHosts[o.hostport()] = true
		return
	}
	p.campusHosts[o.host] = true
}

// isCampusHost reports whether a web request to host:port would reach a
// campus service: a catalogue host (host:port for loopback entries), or
// pku.edu.cn and every name under it.
func (p *Proxy) isCampusHost(host string, port int) bool {
	return netguard.IsCampusDomain(host) || p.campusHosts[host] || p.campusHosts[netguard.JoinHostPort(host, port)]
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

func (p *Proxy) newTransport(dial func(ctx context.Context, network, addr string) (net.Conn, error), roots *x509.CertPool) *http.Transport {
	protos := new(http.Protocols)
	protos.SetHTTP1(true) // HTTP/1.1 only: the card service refuses HTTP/2
	t := &http.Transport{
		Proxy:                  nil, // never an environment proxy
		DialContext:            dial,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots},
		TLSHandshakeTimeout:    10 * time.Second,
		DisableCompression:     true, // the proxy decompresses, within its limit
		MaxResponseHeaderBytes: p.lim.MaxHeaderBytes,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
		Protocols:              protos,
	}
	if p.resolveRoots != nil {
		t.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return p.dialTLS(ctx, dial, roots, network, addr)
		}
	}
	return t
}

// dialTLS is a transport's TLS connection when --ca is given: the extra
// roots verify the hosts Resolve maps, the usual roots every other host.
// HTTP/1.1 only, TLS 1.2 or newer, the handshake bounded.
func (p *Proxy) dialTLS(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), roots *x509.CertPool, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: bad address %s", ErrRefused, addr)
	}
	conn, err := dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host, NextProtos: []string{"http/1.1"}, RootCAs: roots}
	if _, ok := p.resolve[addr]; ok {
		cfg.RootCAs = p.resolveRoots
	}
	tc := tls.Client(conn, cfg)
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// sealedCheck is the sealed setting's decision for one connection to
// addr (after the Resolve mapping): nothing but a loopback address
// literal, decided before any lookup or packet.
func (p *Proxy) sealedCheck(addr string) error {
	if p.sealed == "" {
		return nil
	}
	if err := netguard.CheckSealedDial(addr); err != nil {
		return fmt.Errorf("%w: %s reaches nothing beyond loopback: %s", ErrRefused, p.sealed, strings.TrimPrefix(err.Error(), netguard.ErrDenied.Error()+": "))
	}
	return nil
}

var dialer = &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}

// dialCampus connects to a catalogue origin (or its --resolve mapping).
func (p *Proxy) dialCampus(ctx context.Context, network, addr string) (net.Conn, error) {
	if a, ok := p.resolve[addr]; ok {
		addr = a
	}
	if err := p.sealedCheck(addr); err != nil {
		return nil, err
	}
	return p.dial(ctx, network, addr)
}

// guardControl is the guarded dialer's check of every address it
// connects to, after resolution.
func (p *Proxy) guardControl(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("%w: network %s", ErrRefused, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse %s", ErrRefused, address)
	}
	return p.checkAddr(ap.Addr())
}

// dialWeb connects a web request: a --resolve mapping for exactly this
// host:port, or every resolved address checked by the guard (any refused
// address refuses the request: a mixed answer is a rebinding attempt), and
// each connection checked again in the dialer's Control.
func (p *Proxy) dialWeb(ctx context.Context, network, addr string) (net.Conn, error) {
	if a, ok := p.resolve[addr]; ok {
		if err := p.sealedCheck(a); err != nil {
			return nil, err
		}
		return p.dial(ctx, network, a)
	}
	if err := p.sealedCheck(addr); err != nil {
		return nil, err
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
		if err := p.checkAddr(ip); err != nil {
			return nil, err
		}
	}
	var last error
	for _, ip := range ips {
		c, err := p.guardedDialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
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
