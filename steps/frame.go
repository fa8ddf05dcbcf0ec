package steps

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/pkuinfo/harness/internal/diag"
)

// Request is what a request step asks of the transport.
type Request struct {
	Service     string // a campus service, with Path
	Path        string
	URL         string // or a public URL under a declared origin
	Method      string
	Query       url.Values
	Header      http.Header
	Body        []byte
	ContentType string
	Retry       *Retry
}

// Retry is a request's declared retry policy: at most Attempts tries in all,
// on 429, 5xx and timeouts, waiting Backoff, then twice as long, and so on,
// within the call's deadline. Only idempotent methods may retry.
type Retry struct {
	Attempts int
	Backoff  time.Duration
}

// Response is the transport's answer: the body already bounded, decoded to
// UTF-8 and rid of credentials.
type Response struct {
	Status    int
	Header    http.Header
	Body      []byte
	URL       string
	MediaType string
	Binary    bool // the body is not text (an image, a PDF): refused
}

// Transport sends requests. In production it is a proxy call; tests may use
// any implementation that performs real HTTP.
type Transport interface {
	Do(ctx context.Context, r *Request) (*Response, error)
}

// LoginRequired is the transport's error when a campus session is missing or
// expired; the tool then ends with the status result login_required.
type LoginRequired struct {
	Service string
	Message string
}

func (e *LoginRequired) Error() string {
	return fmt.Sprintf("the %s session is missing or expired: %s", e.Service, e.Message)
}

// KV is a plugin's private store.
type KV interface {
	Get(key string) (any, bool, error)
	Set(key string, v any) error // a nil value deletes the key
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

	steps    int
	requests int
	kvWrites int
	ended    bool
	result   any
}

// End ends the tool with v as its result.
func (f *Frame) End(v any) {
	f.ended, f.result = true, v
}

// Ended reports whether a step ended the tool, and its result.
func (f *Frame) Ended() (any, bool) { return f.result, f.ended }

// Steps is the number of steps executed so far.
func (f *Frame) Steps() int { return f.steps }

// CountRequest counts one request against the call's limit.
func (f *Frame) CountRequest() error {
	f.requests++
	if f.requests > f.Limits.Requests {
		return &LimitError{Limit: "requests", Max: int64(f.Limits.Requests), What: "the call's requests"}
	}
	return nil
}

// CountKVWrite counts one change to the plugin's store against the call's
// limit: each rewrites the store's file, so a loop of them would otherwise
// write the whole store hundreds of times in one call.
func (f *Frame) CountKVWrite() error {
	f.kvWrites++
	if f.kvWrites > f.Limits.KVWrites {
		return &LimitError{Limit: "kvWrites", Max: int64(f.Limits.KVWrites), What: "the call's changes to the store"}
	}
	return nil
}

// Failure is the error of a fail step: a message meant for the user.
type Failure struct{ Msg string }

func (e *Failure) Error() string { return e.Msg }

// Located is an error of one step, with the step that failed. The innermost
// step wins: a foreach whose sub-step fails reports the sub-step.
type Located struct {
	Node *Node
	Err  error
}

func (e *Located) Error() string {
	return fmt.Sprintf("%s: step %s (%s): %v", e.Node.Pos, e.Node.Label, e.Node.Kind, e.Err)
}

func (e *Located) Unwrap() error { return e.Err }

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
			var le *Located
			if errors.As(err, &le) {
				return err
			}
			return &Located{Node: n, Err: err}
		}
	}
	return nil
}

func (n *Node) run(ctx context.Context, f *Frame) error {
	f.steps++
	if f.steps > f.Limits.Steps {
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
