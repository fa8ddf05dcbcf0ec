package interpreter

import (
	"time"

	"github.com/pkuinfo/harness/steps"
)

// Option configures Compile.
type Option func(*config)

type config struct {
	limits      steps.Limits
	registry    *steps.Registry
	authHeaders func(service string) []string
}

// WithLimits sets the host's limits (DefaultLimits otherwise). A tool's own
// limits may only lower them.
func WithLimits(l steps.Limits) Option {
	return func(c *config) {
		clock := c.limits.Clock
		c.limits = l
		if l.Clock == nil {
			c.limits.Clock = clock
		}
	}
}

// WithClock sets the time jq's now reports (the real time otherwise), so a
// host or a test can fix "today".
func WithClock(now func() time.Time) Option { return func(c *config) { c.limits.Clock = now } }

// WithAuthHeaders names the headers each campus service's session uses (from
// the catalogue); steps may not set them.
func WithAuthHeaders(f func(service string) []string) Option {
	return func(c *config) { c.authHeaders = f }
}

// RunOption configures one run.
type RunOption func(*runConfig)

// runConfig is the run itself: an option sets its fields (the transport,
// store, trace and redactor are its frame's) before it starts.
type runConfig = run

// WithTransport sets the road out (a proxy call in production).
func WithTransport(t steps.Transport) RunOption {
	return func(c *runConfig) { c.frame.Transport = t }
}

// Road is a call's road out that redacts what it knows: a *proxy.Call.
type Road interface {
	steps.Transport
	Redact(string) string
}

// WithRoad is WithTransport(r) and WithRedact(r.Redact) in one option, as
// a host passes its proxy call: one allocation per run where the two made
// three.
func WithRoad(r Road) RunOption {
	return func(c *runConfig) { c.frame.Transport, c.frame.Redact = r, r }
}

// WithCaller says who calls (the reference's ctx.actor: "user", "agent" or
// "scheduler"; steps read it as $actor) and, for an agent's call inside a
// chat turn, the turn (ctx.turn: $turn, {"sessionId", "tainted",
// "userAsked"}; nil leaves $turn null).
func WithCaller(actor string, turn *Turn) RunOption {
	return func(c *runConfig) {
		c.actor = actor
		c.turn = nil
		if turn != nil {
			c.turn = map[string]any{"sessionId": turn.SessionID, "tainted": turn.Tainted, "userAsked": turn.UserAsked}
		}
	}
}

// WithGrant says how the user answered the call's ask (the reference's
// ctx.grant; steps read it as $grant): "once" or "always" (a standing
// grant included). Without it, or with "", $grant is null: nobody was
// asked.
func WithGrant(answer string) RunOption { return func(c *runConfig) { c.grant = answer } }

// Turn is what a step may know of the agent's turn a call is part of.
type Turn struct {
	SessionID string
	Tainted   bool // earlier in this turn the agent read untrusted data
	UserAsked bool // the user's own message in this turn asks to remember something
}

// WithKV gives the run the plugin's store; kv steps fail without one.
func WithKV(kv steps.KV) RunOption { return func(c *runConfig) { c.frame.KV = kv } }

// WithPrefs overrides preference values (the defaults come from the
// document); each value is checked against its preference's schema.
func WithPrefs(p map[string]any) RunOption { return func(c *runConfig) { c.prefs = p } }

// WithTrace receives every step's event.
func WithTrace(f func(steps.Event)) RunOption { return func(c *runConfig) { c.frame.Trace = f } }

// WithRedact filters every error message the run returns (the proxy call's
// Redact), so no credential leaves in a message.
func WithRedact(f func(string) string) RunOption {
	return func(c *runConfig) {
		c.frame.Redact = nil
		if f != nil {
			c.frame.Redact = redactFunc(f)
		}
	}
}

// WithCheckedInput says the input was validated against the tool's schema
// already (registry.Decide does it for every permitted call), so the run
// does not validate it a second time; its depth is still bounded by the
// tool's limits.
func WithCheckedInput() RunOption { return func(c *runConfig) { c.checked = true } }
