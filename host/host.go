// Package host is the engine's one wiring: a Host owns the campus service
// catalogue, the keystore, the credential-signing proxy, the clock, the home
// folder and its stores once, and turns a parsed document into something
// runnable. `harness run`, `harness mcp` and `harness test` build their runs
// through it, and so does a Go program that embeds the engine.
//
// A Host checks every campus service a step names against its catalogue
// (with the step's FILE:LINE:COL), and it is the one place where a run's
// result, error and trace leave the engine: each is redacted there, once.
// What a step sees of a response is redacted earlier, by the proxy.
package host

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/steps"
)

// Config is what a host owns. Every field is optional.
type Config struct {
	// Catalogue is the campus services (nil: proxy.Builtin()).
	Catalogue proxy.Catalogue
	// Keystore holds the sessions (nil: none).
	Keystore proxy.Keystore
	// Resolve maps a declared web origin's "host:port" to the address to
	// connect to, as curl --resolve does.
	Resolve map[string]string
	// RootCAs, when set, are the certificate authorities the proxy's TLS
	// connections trust instead of the system's.
	RootCAs *x509.CertPool
	// ResolveCA is PEM certificates trusted beside the system roots for
	// the hosts Resolve maps only (--ca).
	ResolveCA []byte
	// Sealed, when set, names the setting in which nothing leaves
	// loopback (proxy.Config.Sealed).
	Sealed string
	// Clock is jq's now and the registry's clock (nil: the real time).
	Clock func() time.Time
	// Home is the home folder: the plugins' stores and preference values
	// live under it ("": the stores live in memory for the host's life and
	// preferences keep their defaults, unless a call brings its own).
	Home string
}

// Host is the engine's wiring. It is safe for concurrent use.
type Host struct {
	cat   proxy.Catalogue
	keys  proxy.Keystore
	px    *proxy.Proxy
	clock func() time.Time
	home  string

	memMu sync.Mutex
	mem   map[string]*steps.MemKV // the stores without a home folder, by trust and plugin
}

// New builds a host from cfg.
func New(cfg Config) *Host {
	h := &Host{cat: cfg.Catalogue, keys: cfg.Keystore, clock: cfg.Clock, home: cfg.Home}
	if h.cat == nil {
		h.cat = proxy.Builtin()
	}
	if h.keys == nil {
		h.keys = proxy.MemKeystore(nil)
	}
	if h.clock == nil {
		h.clock = time.Now
	}
	h.px = proxy.New(proxy.Config{Catalogue: h.cat, Keystore: h.keys, Resolve: cfg.Resolve, RootCAs: cfg.RootCAs, ResolveCA: cfg.ResolveCA, Sealed: cfg.Sealed})
	return h
}

// Catalogue returns the host's campus services.
func (h *Host) Catalogue() proxy.Catalogue { return h.cat }

// Redact removes every credential the host's proxy knows from s, for text
// that leaves the engine outside a run.
func (h *Host) Redact(s string) string { return h.px.Redact(s) }

// Keystore returns the host's sessions (a recorder checks that none of
// their values reaches what it writes).
func (h *Host) Keystore() proxy.Keystore { return h.keys }

// Clock returns the host's clock.
func (h *Host) Clock() func() time.Time { return h.clock }

// Home returns the host's home folder ("" when it has none).
func (h *Host) Home() string { return h.home }

// Registry returns a registry whose documents run on this host, with the
// host's clock, and opts.
func (h *Host) Registry(opts ...registry.Option) *registry.Registry {
	return registry.New(append(h.RegistryOptions(), opts...)...)
}

// RegistryOptions are the options that make a registry run its documents
// on this host (for registry.OpenHome and registry.New).
func (h *Host) RegistryOptions() []registry.Option {
	return []registry.Option{registry.WithCompiler(h.Compile), registry.WithClock(h.clock)}
}

// authHeaders names each catalogue service's session and CSRF headers,
// which a step may not set.
func (h *Host) authHeaders(service string) []string {
	s, ok := h.cat[service]
	if !ok || s == nil {
		return nil
	}
	out := append([]string(nil), s.Auth.Headers...)
	if s.CSRF.Header != "" {
		out = append(out, s.CSRF.Header)
	}
	return out
}

// UnknownServiceError is a step naming a campus service the host's
// catalogue does not have.
type UnknownServiceError struct {
	Pos     diag.Pos
	Tool    string
	Service string
}

func (e *UnknownServiceError) Error() string {
	return fmt.Sprintf("%s: tool %q calls campus service %q, which the service catalogue does not know", e.Pos, e.Tool, e.Service)
}

// Document is a parsed document compiled for a host. It is immutable and
// safe for concurrent runs.
type Document struct {
	h       *Host
	p       *manifest.Plugin
	prog    *interpreter.Program
	grants  *proxy.Grants                   // the document's access, compiled for the host's proxy
	unknown map[string]*UnknownServiceError // by tool
}

// Load compiles a parsed document for the host: its steps are decoded and
// compiled with the host's clock and catalogue. The list holds the compile
// problems; a tool with problems is left out. A tool whose steps name a
// service the catalogue lacks compiles, and fails when it is run.
func (h *Host) Load(p *manifest.Plugin) (*Document, diag.List) {
	prog, l := interpreter.Compile(p, interpreter.WithAuthHeaders(h.authHeaders), interpreter.WithClock(h.clock))
	d := &Document{h: h, p: p, prog: prog, grants: h.px.Grants(p.ID, p.Access)}
	for _, name := range prog.Tools() {
		for _, u := range prog.ServiceUses(name) {
			if _, ok := h.cat[u.Service]; !ok {
				if d.unknown == nil {
					d.unknown = map[string]*UnknownServiceError{}
				}
				d.unknown[name] = &UnknownServiceError{Pos: u.Pos, Tool: name, Service: u.Service}
				break
			}
		}
	}
	return d, l
}

// Compile implements registry.Compiler: a document that does not compile
// is an error.
func (h *Host) Compile(p *manifest.Plugin) (registry.Runner, error) {
	d, l := h.Load(p)
	if l.HasErrors() {
		return nil, fmt.Errorf("%s does not compile: %v", p.ID, l.Err())
	}
	return d, nil
}

// Plugin returns the parsed document.
func (d *Document) Plugin() *manifest.Plugin { return d.p }

// Host returns the host the document was compiled for.
func (d *Document) Host() *Host { return d.h }

// Program returns the compiled program.
func (d *Document) Program() *interpreter.Program { return d.prog }

// Call is one permitted call of a document's tool.
type Call struct {
	Tool string
	// Input is the tool's input.
	Input map[string]any
	// Checked says Input is a decision's (registry.Decision.Input), which
	// Decide validated against the tool's schema: it is not validated
	// again. Otherwise the run validates it.
	Checked bool
	// Trust is the document's: its store lives under the community
	// folder unless it is official.
	Trust registry.Trust
	// Prefs are the preference values (nil: the home folder's, when the
	// document declares preferences).
	Prefs map[string]any
	// KV is the plugin's store (nil: the home folder's, when the document
	// has the kv ability).
	KV steps.KV
	// Actor is who calls ($actor; "" is the user) and Turn the agent's
	// turn ($turn; nil outside one).
	Actor registry.Actor
	Turn  *registry.TurnInfo
	// Grant is how the user answered the call's ask ($grant: "once" or
	// "always"; "" when nobody was asked, $grant null).
	Grant string
	// Trace, when set, receives the trace: a line per request and per
	// step, or with TraceMode one JSON object per event.
	Trace     io.Writer
	TraceMode interpreter.TraceMode
	// Wrap, when set, wraps the call's road out (its proxy call): a
	// recorder that keeps each exchange as the steps see it
	// (plugintest.Recorder). The wrapped transport must pass every request
	// on to the one it was given.
	Wrap func(steps.Transport) steps.Transport
}

// Run runs one call through its own proxy call (cookie jar, counters). The
// result's JSON, the error's message and the trace are redacted of every
// credential the proxy knows.
func (d *Document) Run(ctx context.Context, c Call) (interpreter.Result, error) {
	if e := d.unknown[c.Tool]; e != nil {
		return interpreter.Result{}, e
	}
	call := d.grants.NewCall()
	opts := make([]interpreter.RunOption, 0, 10) // room for every option below
	if c.Wrap != nil {
		opts = append(opts, interpreter.WithTransport(c.Wrap(call)), interpreter.WithRedact(call.Redact))
	} else {
		opts = append(opts, interpreter.WithRoad(call))
	}
	if c.Actor != "" || c.Turn != nil {
		var turn *interpreter.Turn
		if c.Turn != nil {
			turn = &interpreter.Turn{SessionID: c.Turn.SessionID, Tainted: c.Turn.Tainted, UserAsked: c.Turn.UserAsked}
		}
		opts = append(opts, interpreter.WithCaller(string(c.Actor), turn))
	}
	if c.Grant != "" {
		opts = append(opts, interpreter.WithGrant(c.Grant))
	}
	if c.Checked {
		opts = append(opts, interpreter.WithCheckedInput())
	}
	if c.Trace != nil {
		opts = append(opts, interpreter.NewTracer(c.Trace, call.Redact, c.TraceMode).Options()...)
	}
	kv := c.KV
	if kv == nil && d.p.HasAbility("kv") {
		var err error
		if kv, err = d.h.store(d, c); err != nil {
			return interpreter.Result{}, err
		}
	}
	if kv != nil {
		opts = append(opts, interpreter.WithKV(kv))
	}
	prefs := c.Prefs
	if prefs == nil && len(d.p.Preferences) > 0 && d.h.home != "" {
		home := &registry.HomeStore{Dir: d.h.home}
		var err error
		if prefs, err = home.Prefs(registry.PrefsKey(d.p.ID, c.Trust)); err != nil {
			return interpreter.Result{}, err
		}
		for _, pr := range d.p.Preferences { // a stored value that no longer fits gives way to the default
			if v, ok := prefs[pr.Name]; ok {
				if prefs[pr.Name], ok = pr.Fit(v); !ok {
					delete(prefs, pr.Name)
				}
			}
		}
	}
	if prefs != nil {
		opts = append(opts, interpreter.WithPrefs(prefs))
	}
	input := c.Input
	if input == nil {
		input = map[string]any{}
	}
	res, err := d.prog.Run(ctx, c.Tool, input, opts...)
	if err != nil {
		var se *interpreter.StepError
		if errors.As(err, &se) {
			return res, err // its cause was redacted by the run
		}
		return res, redactedError{msg: call.Redact(err.Error()), err: err}
	}
	return res, nil
}

// redactedError shows a redacted message and keeps the cause for errors.As.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// store opens the plugin's store: under the home folder, else in memory.
func (h *Host) store(d *Document, c Call) (steps.KV, error) {
	if h.home == "" {
		key := registry.PrefsKey(d.p.ID, c.Trust)
		h.memMu.Lock()
		defer h.memMu.Unlock()
		if h.mem == nil {
			h.mem = map[string]*steps.MemKV{}
		}
		if h.mem[key] == nil {
			h.mem[key] = &steps.MemKV{}
		}
		return h.mem[key], nil
	}
	lim, _ := d.prog.Limits(c.Tool)
	kv, err := steps.OpenKV(h.home, d.p.ID, c.Trust != registry.Official, lim)
	if err != nil {
		return nil, err
	}
	return kv, nil
}

// RunTool implements registry.Runner: the result is its JSON text, the
// model's copy cut to the output limit and the whole one for the user
// (registry.Output).
func (d *Document) RunTool(ctx context.Context, req registry.RunRequest) (any, error) {
	res, err := d.Run(ctx, Call{Tool: req.Tool, Input: req.Input, Checked: true, Trust: req.Trust, Prefs: req.Prefs,
		Actor: req.Actor, Turn: req.Turn, Grant: req.Grant})
	if err != nil {
		return nil, err
	}
	return &registry.Output{Model: json.RawMessage(res.JSON), Full: json.RawMessage(res.Full)}, nil
}

// IsInputError reports whether err is an input that does not fit the
// tool's schema.
func IsInputError(err error) bool {
	var ie *interpreter.InputError
	return errors.As(err, &ie)
}
