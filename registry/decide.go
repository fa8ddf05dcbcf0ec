package registry

import (
	"encoding/json"
	"fmt"

	"github.com/pkuinfo/harness/manifest"
)

// Reason says why a decision came out as it did. Each refusal and each ask
// has its own.
type Reason string

// The reasons, in the order the checks run.
const (
	// Allowed: every check passed.
	ReasonAllowed Reason = "allowed"

	// 1. the tool
	ReasonUnknownTool Reason = "unknown_tool" // no such tool
	ReasonUnavailable Reason = "unavailable"  // the host lacks a capability the document requires
	ReasonDisabled    Reason = "disabled"     // the user disabled the plugin

	// 2. the actor
	ReasonUserOnly         Reason = "user_only"          // a userOnly tool called by the agent or the scheduler
	ReasonSchedulerNotRead Reason = "scheduler_not_read" // the scheduler calling a write, money or public tool

	// 3. the effect's mode
	ReasonModeOff      Reason = "mode_off"      // the effect is off for this plugin
	ReasonSchedulerAsk Reason = "scheduler_ask" // the scheduler met an ask, which it treats as declined
	ReasonAlwaysAsk    Reason = "always_ask"    // the tool asks on every agent call
	ReasonModeAsk      Reason = "mode_ask"      // the effect's mode is ask
	ReasonGranted      Reason = "granted"       // a mode_ask the user's standing grant for the tool allows (the agent's call runs unasked)

	// 4. taint
	ReasonTainted Reason = "tainted" // the agent's write/money/public call in a tainted turn

	// 5. the input
	ReasonBadInput Reason = "bad_input" // the input fails the tool's schema

	// after an ask
	ReasonDeclined   Reason = "declined"    // the approver said no
	ReasonNoApprover Reason = "no_approver" // an ask with nobody to ask
)

// Call is one request to run a tool.
type Call struct {
	Tool    string         // id, model name or legacy id
	Actor   Actor          // who calls; "" means User
	Tainted bool           // the turn saw untrusted data
	Input   map[string]any // nil means {}
	// SessionID and UserAsked describe the agent's turn to the tool
	// ($turn): the chat session, and whether the user's own message in
	// this turn asks to remember something.
	SessionID string
	UserAsked bool
}

// Decision is the outcome of the permission rules for one call. Exactly one
// of Allow, Ask or neither (refused) holds.
type Decision struct {
	Allow   bool           `json:"allow"`
	Ask     bool           `json:"ask"`
	Reason  Reason         `json:"reason"`
	Message string         `json:"message"`
	Mode    manifest.Mode  `json:"mode,omitempty"` // the effective mode, when the check got that far
	Tool    *Tool          `json:"-"`
	Input   map[string]any `json:"-"` // the input, {} when nil
	// Always is set on an ask the user may answer always (a standing
	// grant for the tool; see standing): an agent's mode_ask in a turn
	// that is not tainted.
	Always bool `json:"always,omitempty"`
	// Grant is how the user answered for this call (the reference's
	// ctx.grant, $grant): "once" or "always" (also when a standing grant
	// allowed it), "" when nobody was asked.
	Grant Answer `json:"grant,omitempty"`
}

// Refused reports whether the call may not run (and will not be asked).
func (d Decision) Refused() bool { return !d.Allow && !d.Ask }

// ExitCode maps a decision to the command line's exit codes: 0 allowed,
// 2 an unknown tool or an input that fails the schema (usage errors),
// 3 every other refusal and an ask nobody approved.
func (d Decision) ExitCode() int {
	switch {
	case d.Allow:
		return 0
	case d.Reason == ReasonUnknownTool || d.Reason == ReasonBadInput:
		return 2
	}
	return 3
}

// Err returns nil for an allowed call, else a *RefusedError.
func (d Decision) Err() error {
	if d.Allow {
		return nil
	}
	return &RefusedError{Decision: d}
}

// RefusedError is a call the rules did not allow.
type RefusedError struct{ Decision Decision }

func (e *RefusedError) Error() string { return e.Decision.Message }

// ExitCode is the command line's exit code for the refusal.
func (e *RefusedError) ExitCode() int { return e.Decision.ExitCode() }

func refuse(t *Tool, r Reason, format string, args ...any) Decision {
	return Decision{Reason: r, Message: fmt.Sprintf(format, args...), Tool: t}
}

// Decide applies the permission rules to a call without running it and
// without asking anybody: a call that needs the user's yes comes back with
// Ask set and the input already validated.
func (r *Registry) Decide(c Call) Decision {
	if c.Actor == "" {
		c.Actor = User
	}
	t, ok := r.Lookup(c.Tool)
	if !ok {
		return refuse(nil, ReasonUnknownTool, "there is no tool %q", c.Tool)
	}
	d := t.doc
	if d.Unavailable != "" {
		return refuse(t, ReasonUnavailable, "%s is not available: %s", t.ID, d.Unavailable)
	}
	all, err := r.loadSettings()
	if err != nil {
		return refuse(t, ReasonDisabled, "%s: the permission settings cannot be read: %v", t.ID, err)
	}
	ps := r.merged(all, d)
	if ps.Disabled && !d.Core {
		return refuse(t, ReasonDisabled, "%s is disabled: the user turned plugin %s off", t.ID, d.ID)
	}
	mode := Effective(d.Trust, d.Plugin, t.Effect, ps.Modes[t.Effect])
	// The order of a call is the reference's: validate the input, check
	// the mode, ask, run. Bad input is bad input whatever the mode.
	in, err := validInput(t, c.Input)
	if err != nil {
		return Decision{Reason: ReasonBadInput, Tool: t, Mode: mode, Message: err.Error()}
	}
	dec := rule(c.Actor, t.Effect, mode, c.Tainted, t.AlwaysAsk, t.UserOnly)
	dec.Tool, dec.Mode = t, mode
	dec.Message = message(t, c.Actor, dec.Reason, mode)
	if dec.Refused() {
		return dec
	}
	// A standing grant turns the agent's mode_ask of this one tool into a
	// run, never a taint ask: a tainted turn's write, money or public call
	// asks though the user once said always. It is offered only in a turn
	// that is not tainted, where the question came from the user's own
	// request.
	if dec.Reason == ReasonModeAsk && c.Actor == Agent && standing(t) {
		if !(c.Tainted && t.Effect != manifest.Read) && r.granted(t) {
			dec = Decision{Allow: true, Reason: ReasonGranted, Tool: t, Mode: mode, Grant: AnswerAlways,
				Message: fmt.Sprintf("%s runs without asking: the user allowed it always (harness revoke %s %s takes that back)", t.ID, t.Plugin, t.Name)}
		} else if !c.Tainted && r.grantStore() != nil {
			dec.Always = true
		}
	}
	dec.Input = in
	return dec
}

// validInput is check 2: the input as plain JSON, within the bounds and
// the tool's schema. The error names the tool and the field.
func validInput(t *Tool, in map[string]any) (map[string]any, error) {
	if in == nil {
		in = map[string]any{}
	}
	in, err := normalize(in)
	if err != nil {
		return nil, fmt.Errorf("%s: the input is not JSON: %v", t.ModelName, err)
	}
	if err := manifest.CheckInputBounds(t.schema, in); err != nil {
		return nil, fmt.Errorf("%s: %v", t.ModelName, err)
	}
	if err := t.schema.Validate(in); err != nil {
		return nil, fmt.Errorf("%s: the input does not fit the tool's schema: %s", t.ModelName, manifest.SchemaMessage(err))
	}
	return in, nil
}

// rule is checks 3 to 5 for one tool of an available, enabled plugin.
func rule(a Actor, e manifest.Effect, mode manifest.Mode, tainted, alwaysAsk, userOnly bool) Decision {
	switch {
	case userOnly && a != User:
		return Decision{Reason: ReasonUserOnly}
	case a == User:
		// A call from the user is never questioned: the tap itself shows
		// what the user wants. Modes are about the agent and the scheduler.
		return Decision{Allow: true, Reason: ReasonAllowed}
	case a == Scheduler && e != manifest.Read:
		return Decision{Reason: ReasonSchedulerNotRead}
	case mode == manifest.Off || (mode != manifest.Auto && mode != manifest.Ask):
		return Decision{Reason: ReasonModeOff}
	case alwaysAsk && a == Scheduler, mode == manifest.Ask && a == Scheduler:
		return Decision{Reason: ReasonSchedulerAsk}
	case alwaysAsk:
		return Decision{Ask: true, Reason: ReasonAlwaysAsk}
	case mode == manifest.Ask:
		return Decision{Ask: true, Reason: ReasonModeAsk}
	case tainted && a == Agent && e != manifest.Read:
		return Decision{Ask: true, Reason: ReasonTainted}
	}
	return Decision{Allow: true, Reason: ReasonAllowed}
}

func message(t *Tool, a Actor, r Reason, mode manifest.Mode) string {
	d := t.doc
	switch r {
	case ReasonUserOnly:
		return fmt.Sprintf("%s is for the user only: the %s may not call it", t.ID, a)
	case ReasonSchedulerNotRead:
		return fmt.Sprintf("%s has effect %s%s: the scheduler may call only read tools", t.ID, t.Effect, effectNote(t))
	case ReasonModeOff:
		return fmt.Sprintf("%s tools of %s are off%s", t.Effect, d.ID, effectNote(t))
	case ReasonSchedulerAsk:
		return fmt.Sprintf("%s needs the user's approval, which the scheduler cannot ask for", t.ID)
	case ReasonAlwaysAsk:
		return fmt.Sprintf("%s asks the user before every call", t.ID)
	case ReasonModeAsk:
		return fmt.Sprintf("%s tools of %s (%s) ask the user first%s", t.Effect, d.ID, d.Trust, effectNote(t))
	case ReasonTainted:
		return fmt.Sprintf("this turn read untrusted data, so the %s tool %s asks the user first%s", t.Effect, t.ID, effectNote(t))
	}
	return fmt.Sprintf("%s may run", t.ID)
}

// effectNote says why a tool counts above its declared effect (" (declared
// read, sends POST to card /x)"), or "".
func effectNote(t *Tool) string {
	if t.EffectWhy == "" {
		return ""
	}
	return " (" + t.EffectWhy + ")"
}

// MaxInputBytes bounds a call's input as JSON.
const MaxInputBytes = 1 << 20

// normalize turns a Go value into plain JSON data (maps, slices, float64,
// strings, bools, nil), as the schema validator and the steps expect.
func normalize(in map[string]any) (map[string]any, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxInputBytes {
		return nil, fmt.Errorf("the input is larger than %d bytes", MaxInputBytes)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
