package interpreter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/steps"
)

// VisibleVars are the variables every step may read, in slot order: the
// input, the preferences, who calls ($actor: user, agent or scheduler) and
// the agent's turn ($turn: {sessionId, tainted, userAsked}, null outside
// one) and how the user answered the call's ask ($grant: "once" or
// "always", null when nobody was asked), as the reference's ToolContext
// gives them.
var VisibleVars = []string{"input", "prefs", "actor", "turn", "grant"}

// Program is a document's tools, compiled once. It is immutable and safe
// for concurrent runs.
type Program struct {
	Plugin *manifest.Plugin
	tools  map[string]*tool
	prefs  map[string]any         // defaults
	unsafe map[string][]steps.Use // every tool's requests that can send an unsafe method (effect.go)
	kinds  map[string][]steps.KindUse
	all    map[string][]steps.Use // every use of access, per tool (Uses)
}

type tool struct {
	t        *manifest.Tool
	block    steps.Block
	slots    int
	limits   Limits
	services []string
	uses     []steps.Use // the first request naming each service, in services' order

	emptyOnce sync.Once // the schema's verdict on an empty input, once
	emptyErr  string
}

// Compile decodes and compiles every tool's steps: jq programs, selectors
// and templates, the declared-access check. Tools with problems are left
// out of the Program; the list holds every problem, sorted.
func Compile(p *manifest.Plugin, opts ...Option) (*Program, diag.List) {
	cfg := config{limits: DefaultLimits(), registry: steps.Builtin()}
	for _, o := range opts {
		o(&cfg)
	}
	var l diag.List
	prog := &Program{Plugin: p, tools: map[string]*tool{}, prefs: map[string]any{}, unsafe: map[string][]steps.Use{}, kinds: map[string][]steps.KindUse{}, all: map[string][]steps.Use{}}
	for _, pr := range p.Preferences {
		prog.prefs[pr.Name] = steps.FromGo(pr.Default)
	}
	for _, t := range p.Tools {
		if t.Steps == nil || t.Doc == nil {
			continue
		}
		var tl diag.List
		lim := toolLimits(t.Doc, t.Limits, cfg.limits, &tl)
		c := &steps.Compiler{
			Doc: t.Doc, L: &tl, Scope: steps.NewScope(VisibleVars...), Limits: &lim,
			Registry: cfg.registry, Plugin: p, AuthHeaders: cfg.authHeaders,
		}
		block := c.Block(t.Steps, "steps")
		c.CheckUses()
		prog.unsafe[t.Name] = unsafeUses(c.Uses)
		prog.kinds[t.Name] = c.Kinds
		prog.all[t.Name] = c.Uses
		l.Merge(tl)
		if tl.HasErrors() {
			continue
		}
		tl2 := &tool{t: t, block: block, slots: c.Scope.Slots(), limits: lim}
		seen := map[string]bool{}
		for _, u := range c.Uses {
			if u.Service != "" && !seen[u.Service] {
				seen[u.Service] = true
				tl2.uses = append(tl2.uses, u)
			}
		}
		sort.Slice(tl2.uses, func(i, j int) bool { return tl2.uses[i].Service < tl2.uses[j].Service })
		for _, u := range tl2.uses {
			tl2.services = append(tl2.services, u.Service)
		}
		prog.tools[t.Name] = tl2
	}
	l.Sort()
	return prog, l
}

// Steps lists a tool's steps by kind, in document order, as far as they
// were read (also for a tool whose steps did not compile).
func (p *Program) Steps(tool string) []steps.KindUse { return p.kinds[tool] }

// Tools lists the runnable tools' names.
func (p *Program) Tools() []string {
	out := make([]string, 0, len(p.tools))
	for n := range p.tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Limits returns a tool's limits (the host's, lowered by the tool).
func (p *Program) Limits(name string) (Limits, bool) {
	t, ok := p.tools[name]
	if !ok {
		return Limits{}, false
	}
	return t.limits, true
}

// Result is a tool's result.
type Result struct {
	Value     any    // the result as jq values
	JSON      []byte // compact JSON with sorted keys, cut when longer than the output limit: the model's copy
	Full      []byte // the same JSON whole (redacted as JSON is): the user's copy
	Truncated bool   // JSON was cut
	Status    string // the status field of a status result ("login_required"), else ""
	Steps     int    // steps executed
}

// TruncatedNote is the marker field of a cut result. A result whose JSON
// text is longer than the output limit (12,000 characters by default) is
// replaced by {"truncated": true, "characters": N, "text": FIRST_PART,
// "note": TruncatedNote}, whose JSON fits the limit.
const TruncatedNote = "the result was cut: text holds the start of its JSON"

// Run validates input and runs tool name. The error is an *InputError, an
// *UnknownToolError, or a *StepError (with a *steps.Failure, a
// *steps.LimitError or another cause inside).
func (p *Program) Run(ctx context.Context, name string, input any, opts ...RunOption) (Result, error) {
	t, ok := p.tools[name]
	if !ok {
		return Result{}, &UnknownToolError{Tool: name, Tools: p.Tools()}
	}
	s := &run{tool: t} // the options set it: one allocation for the run
	rc := s
	for _, o := range opts {
		o(rc)
	}
	if input == nil {
		input = map[string]any{}
	}
	input = steps.FromGo(input)
	if err := steps.CheckDepth(input, t.limits.Depth); err != nil {
		return Result{}, &InputError{Tool: name, Msg: err.Error()}
	}
	if t.t.InputSchema != nil && !rc.checked {
		if m, ok := input.(map[string]any); ok && len(m) == 0 {
			// A tool called without input: the verdict on {} is the
			// schema's, found once.
			t.emptyOnce.Do(func() { t.emptyErr = checkInput(t.t, m) })
			if t.emptyErr != "" {
				return Result{}, &InputError{Tool: name, Msg: t.emptyErr}
			}
		} else if msg := checkInput(t.t, input); msg != "" {
			return Result{}, &InputError{Tool: name, Msg: msg}
		}
	}
	prefs, err := p.prefValues(rc.prefs)
	if err != nil {
		return Result{}, err
	}
	return s.exec(ctx, input, prefs)
}

// checkInput checks input against the tool's schema: "" when it fits,
// else the message.
func checkInput(t *manifest.Tool, input any) string {
	if err := manifest.CheckInputBounds(t.InputSchema, input); err != nil {
		return err.Error()
	}
	if err := t.InputSchema.Validate(input); err != nil {
		return manifest.SchemaMessage(err)
	}
	return ""
}

func (p *Program) prefValues(over map[string]any) (map[string]any, error) {
	if len(over) == 0 {
		return p.prefs, nil
	}
	out := make(map[string]any, len(p.prefs))
	for k, v := range p.prefs {
		out[k] = v
	}
	for _, pr := range p.Plugin.Preferences {
		v, ok := over[pr.Name]
		if !ok {
			continue
		}
		v = steps.FromGo(v)
		if pr.Compiled != nil {
			if err := pr.Compiled.Validate(v); err != nil {
				return nil, fmt.Errorf("preference %q: %s", pr.Name, manifest.SchemaMessage(err))
			}
		}
		out[pr.Name] = v
	}
	return out, nil
}

// run is the state of one call, set up by its options (runConfig). It is
// one allocation per call, kept at most 512 bytes (the allocator's size
// without a header): the options' transport, store, trace and redactor
// are the frame's own fields, not copied into it.
type run struct {
	tool  *tool
	frame steps.Frame // the call's context inside
	vars  [8]any      // the frame's variables, when the tool has no more

	prefs    map[string]any
	reqTrace func(RequestEvent) // WithRequestTrace (trace.go)
	turn     map[string]any     // $turn; null when unset
	actor    string             // $actor; "user" when unset
	grant    string             // $grant; null when ""
	checked  bool
}

// actorValue is $actor: a constant for each actor the reference names (a
// string made an interface value is otherwise an allocation per run).
func actorValue(a string) any {
	switch a {
	case "", "user":
		return "user"
	case "agent":
		return "agent"
	case "scheduler":
		return "scheduler"
	}
	return a
}

func (s *run) exec(ctx context.Context, input, prefs any) (Result, error) {
	lim := &s.tool.limits
	f := &s.frame
	f.Limits = lim
	ctx = f.Begin(ctx) // the deadline and the heap watch
	defer f.Finish()
	if n := s.tool.slots; n <= len(s.vars) {
		f.Vars = s.vars[:n:n]
	} else {
		f.Vars = make([]any, n)
	}
	actor := actorValue(s.actor)
	var turn any
	if s.turn != nil {
		turn = s.turn
	}
	var grant any
	if s.grant != "" {
		grant = s.grant
	}
	f.Vars[0], f.Vars[1], f.Vars[2], f.Vars[3], f.Vars[4] = input, prefs, actor, turn, grant
	// The options set f.Transport, f.KV, f.Trace and f.Redact (messages a
	// step cuts are redacted first).
	if s.reqTrace != nil && f.Transport != nil {
		f.Transport = tracedTransport{f.Transport, s.reqTrace}
	}
	if f.KV != nil && f.Redact != nil {
		f.KV = redactKV{f.KV, f.Redact, lim}
	}
	err := s.tool.block.Run(ctx, f)
	if err != nil {
		return Result{Steps: f.Steps()}, s.stepError(ctx, err)
	}
	v, ended := f.Ended()
	if !ended {
		v = f.Dot
	}
	res := Result{Value: v, Steps: f.Steps()}
	if m, ok := v.(map[string]any); ok && ended {
		if st, ok := m["status"].(string); ok {
			res.Status = st
		}
	}
	// One walk bounds the text (at most maxResultBytes), checks the
	// nesting and finds what to clean; then the text is written once.
	b, over, err := steps.EncodeBounded(v, lim.Depth, min(maxResultBytes(lim), steps.MaxEncodeBytes))
	if over && maxResultBytes(lim) > steps.MaxEncodeBytes {
		// A host's limit above Encode's own: Encode's error, as before.
		b, err = steps.Encode(v, lim.Depth)
	} else if over {
		return res, &StepError{Pos: s.tool.t.Pos, Tool: s.tool.t.Name, Kind: "result", Err: resultTooLarge(lim)}
	}
	if err == nil && f.Redact != nil {
		// Redacted before the cut (a cut could split a secret), value by
		// value, so that the text stays JSON whatever a credential is.
		b, err = redactEncoded(b, v, lim.Depth, f.Redact)
	}
	if err != nil {
		return res, &StepError{Pos: s.tool.t.Pos, Tool: s.tool.t.Name, Kind: "result", Err: err}
	}
	res.Full = b
	res.JSON, res.Truncated = Cut(b, lim.Output)
	return res, nil
}

func (s *run) stepError(ctx context.Context, err error) error {
	var se *StepError
	if !errors.As(err, &se) {
		return err
	}
	if s.frame.HeapStopped() {
		se.Err = &steps.LimitError{Limit: "heapBytes", Max: s.tool.limits.HeapBytes, What: "the process heap"}
	} else if errors.Is(se.Err, context.DeadlineExceeded) && ctx.Err() != nil {
		se.Err = &steps.LimitError{Limit: "deadline", Max: int64(s.tool.limits.Deadline / time.Millisecond), What: "the call's time in milliseconds"}
	}
	if r := s.frame.Redact; r != nil {
		// Cleaned first, as StepError.Error cleans it: an invisible
		// character removed after the redaction could join a credential.
		se.Err = redacted{msg: hidePreviews(r.Redact(steps.CleanString(se.Err.Error()))), err: se.Err}
	}
	se.Tool = s.tool.t.Name
	return se
}

// redacted keeps the cause for errors.As while showing a filtered message.
type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }

// Cut returns b when it has at most max characters, else the wrapper object
// described at TruncatedNote, whose JSON has at most max characters.
func Cut(b []byte, max int) ([]byte, bool) {
	if len(b) <= max {
		return b, false // never more characters than bytes
	}
	n := utf8.RuneCount(b)
	if n <= max {
		return b, false
	}
	wrap := func(keep int) []byte {
		out, _ := steps.Encode(map[string]any{"truncated": true, "characters": n, "text": prefixRunes(b, keep), "note": TruncatedNote}, 4)
		return out
	}
	// The longest start whose wrapper fits: binary search.
	lo, hi := 0, max
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if utf8.RuneCount(wrap(mid)) <= max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return wrap(lo), true
}

func prefixRunes(b []byte, n int) string {
	i := 0
	for k := 0; k < n && i < len(b); k++ {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return string(b[:i])
}

// Services lists the campus services a tool's requests name.
func (p *Program) Services(name string) []string {
	t, ok := p.tools[name]
	if !ok {
		return nil
	}
	return t.services
}

// ServiceUses lists, for each campus service a tool's requests name (in
// Services' order), the first request that names it, with its position.
func (p *Program) ServiceUses(name string) []steps.Use {
	t, ok := p.tools[name]
	if !ok {
		return nil
	}
	return t.uses
}
