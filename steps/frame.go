package steps

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/proxy"
)

// Transport sends a request step's requests: a *proxy.Call in production
// (the proxy's request and response are the steps' own), any
// implementation that performs real HTTP in tests. A missing or expired
// campus session is a *proxy.LoginRequiredError, which ends the tool with
// the status result login_required. The response body comes bounded,
// decoded to UTF-8 and rid of credentials.
type Transport interface {
	Do(ctx context.Context, r *proxy.Request) (*proxy.Response, error)
}

// KV is a plugin's private store.
type KV interface {
	Get(key string) (any, bool, error)
	Set(key string, v any) error // a nil value deletes the key
}

// Redactor replaces every credential in a text (a *proxy.Call).
type Redactor interface{ Redact(string) string }

// cutText is s cleaned and redacted (with r, when not nil), then cut to at
// most n bytes at a rune boundary; cut says whether it was.
func cutText(r Redactor, s string, n int) (out string, cut bool) {
	if len(s) <= n && r == nil {
		return s, false
	}
	if r != nil {
		// Cleaned first: an invisible character removed after the
		// redaction could join a credential.
		s = r.Redact(CleanString(s))
	}
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// Event is one step's trace record.
type Event struct {
	Kind     string
	Label    string // "3", or "3.1" inside a foreach
	Pos      diag.Pos
	Duration time.Duration
	Skipped  bool
	Output   any
	Err      error
}

// Frame is what a step may touch while it runs: its input `.`, the variable
// slots, the transport, the store, the limits and the counters of the call.
// A frame belongs to one run; it is never shared between goroutines.
type Frame struct {
	Dot       any
	Vars      []any
	Transport Transport
	KV        KV
	Limits    *Limits
	Trace     func(Event) // nil: no trace
	// Redact is the run's redactor (nil: none). A message a step cuts
	// (a fail message, a jq error) is redacted before the cut: a cut of a
	// credential the step rebuilt would show its start, which no
	// redaction afterwards finds.
	Redact Redactor

	steps    int32 // int32s: the frame lives in its run's one allocation, kept small
	requests int32
	kvWrites int32
	ended    bool
	result   any

	call deadlineCtx // the call's context, from Begin
	jq   jqWatch     // what the call's jq programs run under, once begun
}

// Begin starts the call: the context returned ends at now plus the
// deadline limit, when the process heap passes the heapBytes limit (0: no
// watch), or with parent; Finish ends it. It lives inside the frame, which
// is begun once.
func (f *Frame) Begin(parent context.Context) context.Context {
	f.call.start(parent, max(f.Limits.Deadline, 0), f.Limits.HeapBytes)
	if f.Limits.HeapBytes > 0 {
		f.jq.call = &f.call
	}
	return &f.call
}

// Finish ends the context Begin returned.
func (f *Frame) Finish() { f.call.stop() }

// HeapStopped reports whether the heap watch ended the call's context.
func (f *Frame) HeapStopped() bool { return f.call.heapStopped.Load() }

// jqWatch is the context a begun frame's jq programs run under: the step's
// own, whose Done gojq asks for before each operation; every heapCheckOps
// of them (counted across the call's programs) it reads the heap for the
// call, so a program that grows a value in many small steps is stopped
// within that many operations of passing the limit, rather than up to a
// watcher's tick later. Only gojq's evaluation of one program at a time
// sees it (JQ.First sets and restores it).
type jqWatch struct {
	context.Context
	call *deadlineCtx // nil: no heap watch
	ops  int
}

func (w *jqWatch) Done() <-chan struct{} {
	if w.ops++; w.ops >= heapCheckOps {
		w.ops = 0
		w.call.checkHeap()
	}
	return w.Context.Done()
}

// End ends the tool with v as its result.
func (f *Frame) End(v any) {
	f.ended, f.result = true, v
}

// Ended reports whether a step ended the tool, and its result.
func (f *Frame) Ended() (any, bool) { return f.result, f.ended }

// Steps is the number of steps executed so far.
func (f *Frame) Steps() int { return int(f.steps) }

// CountRequest counts one request against the call's limit.
func (f *Frame) CountRequest() error {
	f.requests++
	if int(f.requests) > f.Limits.Requests {
		return &LimitError{Limit: "requests", Max: int64(f.Limits.Requests), What: "the call's requests"}
	}
	return nil
}

// CountKVWrite counts one change to the plugin's store against the call's
// limit: each rewrites the store's file, so a loop of them would otherwise
// write the whole store hundreds of times in one call.
func (f *Frame) CountKVWrite() error {
	f.kvWrites++
	if int(f.kvWrites) > f.Limits.KVWrites {
		return &LimitError{Limit: "kvWrites", Max: int64(f.Limits.KVWrites), What: "the call's changes to the store"}
	}
	return nil
}

// Failure is the error of a fail step: a message meant for the user.
type Failure struct{ Msg string }

func (e *Failure) Error() string { return e.Msg }

// StepError is the engine's one positioned error: a failed step, where it
// is, its tool, number and kind. It renders as
// "tools/free.yaml:14:5: step 3 (request): the portal answered 503", or
// "FILE:LINE:COL: the result: ..." for a result over a limit (Label "").
// The innermost step wins: a foreach whose sub-step fails reports the
// sub-step. Block.Run fills the position, label, index and kind; the
// interpreter adds the tool.
type StepError struct {
	Pos   diag.Pos
	Tool  string
	Index int    // the top-level step's number, 1-based
	Label string // the step's number as shown: "3", or "3.2" inside a foreach
	Kind  string
	Err   error
}

func (e *StepError) Error() string {
	if e.Label == "" {
		return CleanString(fmt.Sprintf("%s: the result: %v", e.Pos, e.Err))
	}
	return CleanString(fmt.Sprintf("%s: step %s (%s): %v", e.Pos, e.Label, e.Kind, e.Err))
}

func (e *StepError) Unwrap() error { return e.Err }

// stepError places err at step n.
func stepError(n *Node, err error) *StepError {
	idx := 0
	for _, c := range n.Label {
		if c < '0' || c > '9' {
			break
		}
		idx = idx*10 + int(c-'0')
	}
	return &StepError{Pos: n.Pos, Index: idx, Label: n.Label, Kind: n.Kind, Err: err}
}

// Node is a decoded step with its modifiers.
type Node struct {
	Kind  string
	Label string
	Pos   diag.Pos
	If    *JQ
	As    int // slot + 1; 0 when the step binds nothing
	Step  Step
}

// Block is a list of steps run in order.
type Block []*Node

// Run runs the steps on f.Dot, leaving the last output in f.Dot. It stops
// when a step ends the tool.
func (b Block) Run(ctx context.Context, f *Frame) error {
	for _, n := range b {
		if f.ended {
			return nil
		}
		if err := n.run(ctx, f); err != nil {
			var se *StepError
			if errors.As(err, &se) {
				return err
			}
			return stepError(n, err)
		}
	}
	return nil
}

func (n *Node) run(ctx context.Context, f *Frame) error {
	f.steps++
	if int(f.steps) > f.Limits.Steps {
		return &LimitError{Limit: "steps", Max: int64(f.Limits.Steps), What: "the steps executed"}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var start time.Time
	if f.Trace != nil {
		start = time.Now()
	}
	run := true
	if n.If != nil {
		ok, err := n.If.Bool(ctx, f, f.Dot)
		if err != nil {
			return fmt.Errorf("if: %w", err)
		}
		run = ok
	}
	var out any
	if run {
		var err error
		out, err = n.Step.Run(ctx, f)
		if err != nil {
			if f.Trace != nil {
				f.Trace(Event{Kind: n.Kind, Label: n.Label, Pos: n.Pos, Duration: time.Since(start), Err: err})
			}
			return err
		}
		if !f.ended {
			f.Dot = out
		}
	}
	if n.As > 0 {
		f.Vars[n.As-1] = out
	}
	if f.Trace != nil {
		ev := Event{Kind: n.Kind, Label: n.Label, Pos: n.Pos, Duration: time.Since(start), Skipped: !run, Output: out}
		if f.ended {
			ev.Output = f.result
		}
		f.Trace(ev)
	}
	return nil
}

// The proxy's call is the steps' transport, with no adapter.
var _ Transport = (*proxy.Call)(nil)
