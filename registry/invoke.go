package registry

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"sync/atomic"

	"github.com/pkuinfo/harness/manifest"
)

// ApprovalRequest is what the host shows the user when a call asks.
type ApprovalRequest struct {
	Tool       string          `json:"tool"`      // the tool id
	ModelName  string          `json:"modelName"` // the name the model used
	Title      string          `json:"title"`
	Plugin     string          `json:"plugin"`
	PluginName string          `json:"pluginName"`
	Trust      Trust           `json:"trust"`
	Effect     manifest.Effect `json:"effect"`
	Reason     Reason          `json:"reason"`
	Message    string          `json:"message"`
	Input      map[string]any  `json:"input"`
	// Always says the user may answer always: run now and from then on
	// without asking, as a standing grant for this tool (an Answerer's
	// AnswerAlways). Without it an always is once.
	Always bool `json:"always,omitempty"`
}

// Approver asks the user whether a call may run. The host implements it
// (a dialog in the app; --approve on the command line). An Approver that
// is also an Answerer (AnswerFunc) can answer once or always.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (bool, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (bool, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (bool, error) {
	return f(ctx, req)
}

// ApproveAll says yes to every ask (the command line's --approve).
var ApproveAll Approver = ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return true, nil })

// Source names where an enveloped result comes from.
type Source struct {
	Plugin string `json:"plugin"`
	Tool   string `json:"tool"`
	Trust  Trust  `json:"trust"`
}

// Envelope is how a result reaches the agent. The engine fills Source and
// Untrusted; whatever the tool returned is nested under Data, so a plugin
// cannot pose as another source or as trusted by returning such fields.
type Envelope struct {
	Source    Source `json:"source"`
	Untrusted bool   `json:"untrusted"`
	Data      any    `json:"data"`
	// Full is the whole result for the user's screen when Data, the
	// model's copy, was cut (else the same as Data). It never reaches the
	// agent: the envelope's JSON leaves it out.
	Full any `json:"-"`
}

// Turn tracks whether an agent's turn has seen untrusted data.
type Turn struct{ tainted atomic.Bool }

// Tainted reports whether the turn has seen untrusted data.
func (t *Turn) Tainted() bool { return t.tainted.Load() }

// Observe taints the turn when the envelope is untrusted.
func (t *Turn) Observe(e *Envelope) {
	if e != nil && e.Untrusted {
		t.tainted.Store(true)
	}
}

// Authorize decides a call and settles an ask with the approver: the result
// is allowed or refused, never an ask. With no approver an ask is refused
// (ReasonNoApprover); a no is ReasonDeclined.
func (r *Registry) Authorize(ctx context.Context, c Call, ap Approver) Decision {
	d := r.Decide(c)
	if !d.Ask {
		return d
	}
	t := d.Tool
	if ap == nil {
		d.Ask, d.Reason = false, ReasonNoApprover
		d.Message = fmt.Sprintf("%s needs the user's approval and nobody can be asked (%s)", t.ID, d.Message)
		return d
	}
	a, err := answer(ctx, ap, ApprovalRequest{
		Tool: t.ID, ModelName: t.ModelName, Title: t.Title, Plugin: t.Plugin, PluginName: t.doc.Name,
		Trust: t.doc.Trust, Effect: t.Effect, Reason: d.Reason, Message: d.Message, Input: d.Input, Always: d.Always,
	})
	d.Ask = false
	if err != nil || a == AnswerNo {
		d.Reason = ReasonDeclined
		d.Message = fmt.Sprintf("the user declined %s", t.ID)
		if err != nil {
			d.Message = fmt.Sprintf("%s: asking the user failed: %v", t.ID, err)
		}
		return d
	}
	d.Allow, d.Grant = true, a
	if a == AnswerAlways {
		if err := r.grant(t); err != nil {
			d.Grant = AnswerOnce
			d.Message += fmt.Sprintf("; allowed once: the standing grant could not be kept (%v)", err)
		}
	}
	return d
}

// Invoke authorizes a call and runs it. A refusal is a *RefusedError; a
// tool's own failure comes back as the runner returned it.
func (r *Registry) Invoke(ctx context.Context, c Call, ap Approver) (*Envelope, error) {
	d := r.Authorize(ctx, c, ap)
	if !d.Allow {
		return nil, d.Err()
	}
	if c.Actor == "" {
		c.Actor = User
	}
	var turn *TurnInfo
	if c.Actor == Agent {
		turn = &TurnInfo{SessionID: pluginSessionID(c.SessionID, d.Tool.Plugin), Tainted: c.Tainted, UserAsked: c.UserAsked}
	}
	return r.run(ctx, d.Tool, d.Input, c.Actor, turn, d.Grant)
}

// run runs a permitted call and wraps the result.
func (r *Registry) run(ctx context.Context, t *Tool, input map[string]any, a Actor, turn *TurnInfo, grant Answer) (*Envelope, error) {
	if t.Serial {
		select {
		case t.sem <- struct{}{}:
			defer func() { <-t.sem }()
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: waited for its previous call to finish: %w", t.ID, ctx.Err())
		}
	}
	var data any
	var err error
	if t.native != nil {
		data, err = t.native.Run(ctx, input)
	} else {
		var run Runner
		run, err = r.runner(t.doc)
		if err == nil {
			var prefs map[string]any
			prefs, err = r.prefValues(t.doc)
			if err == nil {
				data, err = run.RunTool(ctx, RunRequest{Plugin: t.Plugin, Tool: t.Name, Input: input, Prefs: prefs, Actor: a, Trust: t.doc.Trust, Turn: turn, Grant: string(grant)})
			}
		}
	}
	if err != nil {
		return nil, err
	}
	full := data
	if o, ok := data.(*Output); ok && o != nil {
		data, full = o.Model, o.Full
	}
	return &Envelope{
		Source:    Source{Plugin: t.Plugin, Tool: t.Name, Trust: t.doc.Trust},
		Untrusted: t.doc.Trust != Official || t.Untrusted,
		Data:      data,
		Full:      full,
	}, nil
}

func (r *Registry) runner(d *Document) (Runner, error) {
	d.once.Do(func() {
		if r.compile == nil {
			d.runErr = fmt.Errorf("%s cannot run here: the host gave the registry no compiler", d.ID)
			return
		}
		d.runner, d.runErr = r.compile(d.Plugin)
		if d.runErr == nil && d.runner == nil {
			d.runErr = fmt.Errorf("%s: the compiler returned no runner", d.ID)
		}
	})
	return d.runner, d.runErr
}

// pluginSessionID is the session id a plugin sees ($turn.sessionId): a
// hash of the host's session id and the plugin's id, so that a plugin can
// tell its calls of one session apart from another's without learning the
// host's own id (which may be a capability, as an MCP session id is) or
// matching its sessions with another plugin's. "" stays "".
func pluginSessionID(session, plugin string) string {
	if session == "" {
		return ""
	}
	h := sha256.Sum256([]byte("pku-harness turn\x00" + plugin + "\x00" + session))
	return base64.RawURLEncoding.EncodeToString(h[:16])
}
