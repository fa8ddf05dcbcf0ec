// Package mobile is the engine's facade for hosts not written in Go (the
// phone app): every call takes and returns JSON text, and the host's own
// parts (the user's approval, the keystore) are callback interfaces. Its
// exported signatures use only string, bool, error, interfaces and
// pointers to structs, the shape `gomobile bind` accepts.
package mobile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/registry"
)

// Limits on what the app hands in.
const (
	MaxConfigBytes = 1 << 20  // the configuration JSON
	MaxFilesBytes  = 8 << 20  // a document's files as JSON
	MaxCallBytes   = 1 << 20  // a call as JSON
	MaxSecretBytes = 64 << 10 // one service's session as JSON
	CallTimeout    = 2 * time.Minute
)

// Keystore is the app's secure storage of campus sessions.
type Keystore interface {
	// Get returns a service's session as JSON, {"cookies": {NAME: VALUE},
	// "headers": {NAME: VALUE}}, or "" when there is none.
	Get(service string) (string, error)
	// Update stores session cookies a service refreshed, as JSON
	// {NAME: VALUE}, merged into the stored ones.
	Update(service, cookiesJSON string) error
}

// Approver asks the user whether a call that asks may run. request is the
// JSON of registry.ApprovalRequest.
type Approver interface {
	Approve(requestJSON string) (bool, error)
}

// Answerer asks the user whether a call that asks may run, and may answer
// "once" or "always" (a standing grant for the tool, offered when the
// request has "always": true); "no" or anything else declines. request is
// the JSON of registry.ApprovalRequest.
type Answerer interface {
	Answer(requestJSON string) (string, error)
}

// Engine is one host with its registry of documents.
type Engine struct {
	h   *host.Host
	reg *registry.Registry
}

// config is the JSON New takes.
type config struct {
	// Services are campus service entries in the services file's shape,
	// laid over the built-in ones.
	Services map[string]service `json:"services"`
	Resolve  map[string]string  `json:"resolve"`
	Now      string             `json:"now"`  // RFC 3339: the clock starts there
	Home     string             `json:"home"` // the app's data folder ("": stores in memory)
}

type service struct {
	Origin string `json:"origin"`
	Auth   struct {
		Cookies []string `json:"cookies"`
		Headers []string `json:"headers"`
	} `json:"auth"`
	Login struct {
		Redirect  string              `json:"redirect"`
		Redirects []string            `json:"redirects"`
		Status    []int               `json:"status"`
		JSON      map[string][]string `json:"json"`
	} `json:"login"`
	CSRF struct {
		Cookie string `json:"cookie"`
		Header string `json:"header"`
	} `json:"csrf"`
	Headers     map[string]string `json:"headers"`
	Query       map[string]string `json:"query"`
	Concurrency int               `json:"concurrency"`
}

// decode reads one JSON value of at most max bytes, refusing unknown keys.
func decode(what, s string, max int, v any) error {
	if len(s) > max {
		return fmt.Errorf("%s is longer than %d bytes", what, max)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s is not the JSON expected: %v", what, err)
	}
	if dec.More() {
		return fmt.Errorf("%s holds more than one JSON value", what)
	}
	return nil
}

// New builds an engine from configJSON ({"services", "resolve", "now",
// "home"}, every key optional) with the app's keystore (nil: none).
func New(configJSON string, keys Keystore) (*Engine, error) {
	var c config
	if configJSON != "" {
		if err := decode("the configuration", configJSON, MaxConfigBytes, &c); err != nil {
			return nil, err
		}
	}
	over := proxy.Catalogue{}
	for name, s := range c.Services {
		over[name] = &proxy.Service{Name: name, Origin: s.Origin,
			Auth:    proxy.Auth{Cookies: s.Auth.Cookies, Headers: s.Auth.Headers},
			Login:   proxy.Login{Redirect: s.Login.Redirect, Redirects: s.Login.Redirects, Status: s.Login.Status, JSON: s.Login.JSON},
			CSRF:    proxy.CSRF{Cookie: s.CSRF.Cookie, Header: s.CSRF.Header},
			Headers: s.Headers, Query: s.Query, Concurrency: s.Concurrency}
	}
	if err := over.Validate(); err != nil {
		return nil, err
	}
	cfg := host.Config{Catalogue: proxy.Builtin().Merge(over), Resolve: c.Resolve, Home: c.Home}
	if c.Now != "" {
		start, err := time.Parse(time.RFC3339, c.Now)
		if err != nil {
			return nil, fmt.Errorf("now %q is not an RFC 3339 time", c.Now)
		}
		began := time.Now()
		cfg.Clock = func() time.Time { return start.Add(time.Since(began)) }
	}
	if keys != nil {
		cfg.Keystore = keystore{keys}
	}
	h := host.New(cfg)
	return &Engine{h: h, reg: h.Registry()}, nil
}

// keystore is the app's Keystore seen as the proxy's.
type keystore struct{ k Keystore }

func (k keystore) Get(svc string) (*proxy.ServiceSecrets, bool) {
	s, err := k.k.Get(svc)
	if err != nil || s == "" {
		return nil, false
	}
	var ss proxy.ServiceSecrets
	if decode("the session of "+svc, s, MaxSecretBytes, &ss) != nil {
		return nil, false
	}
	// Header names canonical, values copied, as a secrets file's are.
	m := proxy.MemKeystore(proxy.Secrets{svc: &ss})
	return m.Get(svc)
}

func (k keystore) Update(svc string, cookies map[string]string) error {
	b, err := json.Marshal(cookies)
	if err != nil {
		return err
	}
	return k.k.Update(svc, string(b))
}

// Load adds a document from its files, filesJSON {"PLUGIN.md": TEXT,
// "tools/NAME.yaml": TEXT, ...}, with trust "official" or "community". It
// returns {"id", "tools": [NAMES]}; a document with errors is refused with
// every diagnostic as FILE:LINE:COL: message.
func (e *Engine) Load(filesJSON, trust string) (string, error) {
	if trust != string(registry.Official) && trust != string(registry.Community) {
		return "", fmt.Errorf("trust must be official or community, not %q", trust)
	}
	var m map[string]string
	if err := decode("the files", filesJSON, MaxFilesBytes, &m); err != nil {
		return "", err
	}
	files := manifest.Files{}
	for k, v := range m {
		files[k] = []byte(v)
	}
	if err := files.Check(); err != nil {
		return "", err
	}
	d, err := e.reg.AddFiles(files, registry.Trust(trust), registry.DocOptions{})
	if err != nil {
		return "", err
	}
	out := struct {
		ID    string   `json:"id"`
		Tools []string `json:"tools"`
	}{ID: d.ID, Tools: []string{}}
	for _, t := range d.Tools {
		out.Tools = append(out.Tools, t.Name)
	}
	return marshal(out)
}

// Catalogue returns the tools the agent may see (registry.Catalogue) as
// JSON; lang picks translations ("" for none).
func (e *Engine) Catalogue(lang string) (string, error) {
	c, err := e.reg.Catalogue(registry.CatalogueOptions{Lang: lang})
	if err != nil {
		return "", err
	}
	return marshal(c)
}

// call is the JSON of a call.
type call struct {
	Tool    string         `json:"tool"` // plugin.tool or plugin__tool
	Actor   string         `json:"actor"`
	Tainted bool           `json:"tainted"`
	Input   map[string]any `json:"input"`
}

func (e *Engine) parseCall(callJSON string) (registry.Call, error) {
	var c call
	if err := decode("the call", callJSON, MaxCallBytes, &c); err != nil {
		return registry.Call{}, err
	}
	switch c.Actor {
	case "", "user", "agent", "scheduler":
	default:
		return registry.Call{}, fmt.Errorf("actor must be user, agent or scheduler, not %q", c.Actor)
	}
	return registry.Call{Tool: c.Tool, Actor: registry.Actor(c.Actor), Tainted: c.Tainted, Input: c.Input}, nil
}

// Decide applies the permission rules to a call, callJSON {"tool",
// "actor", "tainted", "input"}, without running it: {"allow", "ask",
// "reason", "message", "mode"}.
func (e *Engine) Decide(callJSON string) (string, error) {
	c, err := e.parseCall(callJSON)
	if err != nil {
		return "", err
	}
	return marshal(e.reg.Decide(c))
}

// Run decides a call and runs it; an ask goes to ap (nil: refused). The
// result is the envelope {"source", "untrusted", "data", "full"}: data is
// the model's copy (cut to the output limit), to give the agent; full is
// the whole result, for the user's screen only. A refusal or a failure is
// the error, its message redacted of every credential.
func (e *Engine) Run(callJSON string, ap Approver) (string, error) {
	c, err := e.parseCall(callJSON)
	if err != nil {
		return "", err
	}
	var rap registry.Approver
	if ap != nil {
		rap = registry.ApproverFunc(func(_ context.Context, req registry.ApprovalRequest) (bool, error) {
			b, err := json.Marshal(req)
			if err != nil {
				return false, err
			}
			return ap.Approve(string(b))
		})
	}
	return e.invoke(c, rap)
}

// RunAnswered is Run with an Answerer: the user may answer once or always.
// A standing grant lives as long as the engine (its settings are in
// memory); Grants lists them and Revoke takes them back.
func (e *Engine) RunAnswered(callJSON string, ans Answerer) (string, error) {
	c, err := e.parseCall(callJSON)
	if err != nil {
		return "", err
	}
	var rap registry.Approver
	if ans != nil {
		rap = registry.AnswerFunc(func(_ context.Context, req registry.ApprovalRequest) (registry.Answer, error) {
			b, err := json.Marshal(req)
			if err != nil {
				return registry.AnswerNo, err
			}
			a, err := ans.Answer(string(b))
			return registry.Answer(a), err
		})
	}
	return e.invoke(c, rap)
}

// Grants lists the standing grants as JSON, [{"plugin", "tool", "effect",
// "trust", "hash", "granted", "applies", "why"}].
func (e *Engine) Grants() (string, error) {
	list, err := e.reg.Grants("")
	if err != nil {
		return "", err
	}
	if list == nil {
		list = []registry.GrantState{}
	}
	return marshal(list)
}

// Revoke takes back the standing grant of plugin's tool (every tool's of
// plugin when tool is ""); it reports whether there was one.
func (e *Engine) Revoke(plugin, tool string) (bool, error) {
	n, err := e.reg.Revoke(plugin, tool)
	return n > 0, err
}

func (e *Engine) invoke(c registry.Call, rap registry.Approver) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	env, err := e.reg.Invoke(ctx, c, rap)
	if err != nil {
		return "", err
	}
	return marshal(runAnswer{Envelope: env, Full: env.Full})
}

// runAnswer is the envelope with the user's whole copy beside the model's.
type runAnswer struct {
	*registry.Envelope
	Full any `json:"full"`
}

func marshal(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", errors.New("the answer cannot be written as JSON: " + err.Error())
	}
	return string(b), nil
}
