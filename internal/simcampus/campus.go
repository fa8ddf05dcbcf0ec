package simcampus

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"
)

// Service names, as the catalogue and the official documents spell them.
const (
	Portal   = "portal"
	Card     = "card"
	Treehole = "treehole"
	Wproc    = "wproc"
	Xiaobei  = "xiaobei"
	Dean     = "dean"
	Canteen  = "canteen"

	// iaaa is the unified login; it is an origin of its own but not a service
	// documents call, so it is not in Services.
	iaaa = "iaaa"
)

// ServiceNames lists the simulated services in a stable order.
var ServiceNames = []string{Canteen, Card, Dean, Portal, Treehole, Wproc, Xiaobei}

// ServiceEntry is one entry of the services file (the CONTRACT shape).
type ServiceEntry struct {
	Origin string `yaml:"origin" json:"origin"`
	Auth   Auth   `yaml:"auth,omitempty" json:"auth"`
	Login  Login  `yaml:"login,omitempty" json:"login"`
	// Entry lists the login and hand-off entry points (the services
	// file's entry key): paths a step never requests.
	Entry []string `yaml:"entry,omitempty" json:"entry,omitempty"`
}

// Auth names the cookies and headers the proxy attaches for a service.
type Auth struct {
	Cookies []string `yaml:"cookies,omitempty" json:"cookies,omitempty"`
	Headers []string `yaml:"headers,omitempty" json:"headers,omitempty"`
}

// Login describes how the service signals an expired session: a redirect
// whose path starts with Redirect (the CONTRACT key), an HTTP status in
// Status, or a top-level JSON field with one of the values in JSON (keys
// the proxy's services file also reads).
type Login struct {
	Redirect string              `yaml:"redirect,omitempty" json:"redirect,omitempty"`
	Status   []int               `yaml:"status,omitempty" json:"status,omitempty"`
	JSON     map[string][]string `yaml:"json,omitempty" json:"json,omitempty"`
}

// SecretEntry is one entry of the secrets file: the session values.
type SecretEntry struct {
	Cookies map[string]string `yaml:"cookies,omitempty" json:"cookies,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
}

// Option configures Start.
type Option func(*config)

type config struct {
	clock        func() time.Time
	expired      map[string]bool
	verification map[string]bool
	accounts     []Account
}

// WithClock sets the campus clock. Date-dependent fixtures (today's free
// classrooms, this week's shuttle timetable, today's card spending, upcoming
// events) are generated relative to it, in China Standard Time.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.clock = now
		}
	}
}

// WithExpired makes the service treat every session as expired, so even the
// demo session gets the login redirect or 401 (for demoing login_required).
func WithExpired(service string) Option {
	return func(c *config) { c.expired[service] = true }
}

// WithVerification puts the service in its second-factor state. Only the
// treehole has one: its endpoints answer code 40002 (SMS verification) and
// its grades answer code 40077 (authorisation code) until the client verifies.
func WithVerification(service string) Option {
	return func(c *config) { c.verification[service] = true }
}

// Campus is a running simulated campus. Its methods are safe for concurrent use.
type Campus struct {
	clock   func() time.Time
	origins map[string]string
	servers []*http.Server
	hits    map[string]*atomic.Int64
	secrets map[string]SecretEntry
	entries map[string]ServiceEntry

	mu       sync.Mutex
	expired  map[string]bool
	smsGate  bool // treehole: 40002 until jwt_msg_verify
	gradeTok bool // treehole: 40077 on grades until a token is fetched
	wproc    wprocState
	iaaa     iaaaState

	closeOnce sync.Once
	closeErr  error
}

// Start opens one loopback listener per service (and one for the IAAA login
// page) and serves the simulated campus until Close.
func Start(opts ...Option) (*Campus, error) {
	cfg := config{clock: time.Now, expired: map[string]bool{}, verification: map[string]bool{}}
	for _, o := range opts {
		o(&cfg)
	}
	for s := range cfg.expired {
		if !knownService(s) {
			return nil, fmt.Errorf("simcampus: unknown service %q", s)
		}
	}
	for s := range cfg.verification {
		if s != Treehole {
			return nil, fmt.Errorf("simcampus: service %q has no verification state", s)
		}
	}
	secrets, err := newSecrets(cfg.clock())
	if err != nil {
		return nil, err
	}
	c := &Campus{
		clock:    cfg.clock,
		origins:  map[string]string{},
		hits:     map[string]*atomic.Int64{},
		secrets:  secrets,
		expired:  cfg.expired,
		smsGate:  cfg.verification[Treehole],
		gradeTok: cfg.verification[Treehole],
	}
	if err := c.wproc.init(c.now()); err != nil {
		return nil, err
	}
	c.iaaa.init(append(DemoAccounts(), cfg.accounts...))
	names := append([]string{iaaa}, ServiceNames...)
	lns := make(map[string]net.Listener, len(names))
	for _, name := range names {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("simcampus: listen for %s: %w", name, err)
		}
		lns[name] = ln
		c.origins[name] = "http://" + ln.Addr().String()
		c.hits[name] = new(atomic.Int64)
	}
	c.entries = c.buildEntries()
	handlers := map[string]http.Handler{
		iaaa:     c.iaaaHandler(),
		Portal:   c.portalHandler(),
		Card:     c.cardHandler(),
		Treehole: c.treeholeHandler(),
		Wproc:    c.wprocHandler(),
		Xiaobei:  c.xiaobeiHandler(),
		Dean:     c.deanHandler(),
		Canteen:  c.canteenHandler(),
	}
	for _, name := range names {
		srv := &http.Server{
			Handler:           c.count(name, limitBody(handlers[name])),
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       60 * time.Second,
			MaxHeaderBytes:    64 << 10,
		}
		c.servers = append(c.servers, srv)
		go srv.Serve(lns[name])
	}
	return c, nil
}

func knownService(s string) bool {
	for _, n := range ServiceNames {
		if n == s {
			return true
		}
	}
	return false
}

// Close stops every listener and drops open connections.
func (c *Campus) Close() error {
	c.closeOnce.Do(func() {
		var errs []error
		for _, s := range c.servers {
			if err := s.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// Origin returns the origin (http://127.0.0.1:PORT) of a service, or of
// "iaaa", the login page; "" for an unknown name.
func (c *Campus) Origin(service string) string { return c.origins[service] }

// Services returns the services-file entries for the simulated campus.
func (c *Campus) Services() map[string]ServiceEntry {
	out := make(map[string]ServiceEntry, len(c.entries))
	for k, v := range c.entries {
		v.Auth.Cookies = append([]string(nil), v.Auth.Cookies...)
		v.Auth.Headers = append([]string(nil), v.Auth.Headers...)
		v.Login.Status = append([]int(nil), v.Login.Status...)
		v.Entry = append([]string(nil), v.Entry...)
		if v.Login.JSON != nil {
			j := make(map[string][]string, len(v.Login.JSON))
			for k, vs := range v.Login.JSON {
				j[k] = append([]string(nil), vs...)
			}
			v.Login.JSON = j
		}
		out[k] = v
	}
	return out
}

// ServicesYAML returns Services as a services file (YAML).
func (c *Campus) ServicesYAML() []byte {
	return marshalYAML(c.Services())
}

// marshalYAML encodes plain data with a two-space indent.
func marshalYAML(v any) []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		panic("simcampus: marshal yaml: " + err.Error()) // plain data: cannot fail
	}
	enc.Close()
	return buf.Bytes()
}

// Secrets returns the demo session values per service: fake, made with
// crypto/rand at Start. Services that need no session have no entry.
func (c *Campus) Secrets() map[string]SecretEntry {
	out := make(map[string]SecretEntry, len(c.secrets))
	for k, v := range c.secrets {
		e := SecretEntry{}
		if v.Cookies != nil {
			e.Cookies = map[string]string{}
			for n, s := range v.Cookies {
				e.Cookies[n] = s
			}
		}
		if v.Headers != nil {
			e.Headers = map[string]string{}
			for n, s := range v.Headers {
				e.Headers[n] = s
			}
		}
		out[k] = e
	}
	return out
}

// SecretsYAML returns Secrets as a secrets file (YAML). Write it with mode 0600.
func (c *Campus) SecretsYAML() []byte {
	return marshalYAML(c.Secrets())
}

// Hits returns how many requests the service's listener has received.
func (c *Campus) Hits(service string) int {
	h := c.hits[service]
	if h == nil {
		return 0
	}
	return int(h.Load())
}

// SetExpired switches the expired state of a service while the campus runs.
func (c *Campus) SetExpired(service string, expired bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expired[service] = expired
}

// SetVerification switches the treehole's second-factor state while the
// campus runs (both the SMS gate, code 40002, and the grades gate, 40077).
func (c *Campus) SetVerification(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.smsGate, c.gradeTok = on, on
}

func (c *Campus) isExpired(service string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expired[service]
}

// now is the campus clock in China Standard Time.
func (c *Campus) now() time.Time { return c.clock().In(cst) }

// cst is China Standard Time (no tzdata needed: China has no DST).
var cst = time.FixedZone("CST", 8*3600)

func (c *Campus) count(name string, h http.Handler) http.Handler {
	ctr := c.hits[name]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctr.Add(1)
		h.ServeHTTP(w, r)
	})
}

// maxBody bounds request bodies (forms and JSON) on every service.
const maxBody = 64 << 10

func limitBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h.ServeHTTP(w, r)
	})
}
