package registry

import (
	"context"
	"time"

	"github.com/pkuinfo/harness/manifest"
)

// RunCheck is what `harness run` knows about one call.
type RunCheck struct {
	Plugin  *manifest.Plugin
	Trust   Trust
	Tool    string // the tool's name inside the plugin (or its id or model name)
	Actor   Actor
	Tainted bool
	Approve bool // --approve: yes to every ask
	// Always, with Approve, answers always (--approve=always): a standing
	// grant for the tool where one may be given (kept in Store), once
	// elsewhere. The decision's Grant says which it was.
	Always bool
	Input  map[string]any   // nil means {}
	Store  Store            // the stored modes (nil: every mode its default)
	Now    func() time.Time // the clock a standing grant is dated by (nil: the real one)
}

// CheckRun applies the permission rules to one `harness run` call: the
// full order of Decide, an ask settled by Approve. The decision's ExitCode
// is the command's: 0 go on, 2 unknown tool or bad input, 3 refused (off,
// userOnly, the scheduler and a non-read tool or an ask, an ask without
// --approve, a disabled or unavailable plugin).
func CheckRun(ctx context.Context, rc RunCheck) Decision {
	// Without a store (a local path) every mode is its default and no
	// standing grant is kept: the memory store would forget it at once.
	opts := []Option{WithStore(settingsOnly{NewMemoryStore()})}
	if rc.Store != nil {
		opts = []Option{WithStore(rc.Store)}
	}
	if rc.Now != nil {
		opts = append(opts, WithClock(rc.Now))
	}
	r := New(opts...)
	if _, err := r.AddDocument(rc.Plugin, rc.Trust, DocOptions{}); err != nil {
		return Decision{Reason: ReasonUnavailable, Message: err.Error()}
	}
	name := rc.Tool
	if rc.Plugin.Tool(name) != nil {
		name = rc.Plugin.ID + "." + name
	}
	var ap Approver
	if rc.Approve {
		ap = ApproveAll
		if rc.Always {
			ap = ApproveAlways
		}
	}
	d := r.Authorize(ctx, Call{Tool: name, Actor: rc.Actor, Tainted: rc.Tainted, Input: rc.Input}, ap)
	if d.Reason == ReasonNoApprover {
		d.Message += "; pass --approve"
	}
	return d
}

// settingsOnly is a Store that keeps no standing grants (it hides the
// GrantStore of the one it wraps).
type settingsOnly struct{ Store }
