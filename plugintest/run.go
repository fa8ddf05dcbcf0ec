package plugintest

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/steps"
)

// Options configure a run.
type Options struct {
	// Catalogue gives each campus service its session names, login signals,
	// fixed headers and query (nil: proxy.Builtin()). Origins are ignored:
	// every declared service is served by a replay server. A service the
	// catalogue does not know is replayed as one without a session.
	Catalogue proxy.Catalogue
	// Match selects cases by test file and case name (nil: every case).
	Match func(file, name string) bool
	// Timeout bounds one case (default 30 s).
	Timeout time.Duration
	// Clock is jq's now in a case without its own now (nil: the real time).
	Clock func() time.Time
	// Host, when set, gives the catalogue and the clock instead of
	// Catalogue and Clock (a command's one host). Each case runs on a host
	// of its own made from it: the replay servers, the case's sessions.
	Host *host.Host
}

// Report is the outcome of a document's tests.
type Report struct {
	Plugin   string
	Problems diag.List // the document's or its tests' errors: no case ran
	Cases    []CaseResult
}

// CaseResult is one case's outcome.
type CaseResult struct {
	File     string
	Name     string
	Pos      diag.Pos
	Tool     string
	Failures []string // empty: passed
	Duration time.Duration
}

// Passed reports whether the case passed.
func (c CaseResult) Passed() bool { return len(c.Failures) == 0 }

// OK reports whether the document is valid and every case passed (and
// there is at least one).
func (r *Report) OK() bool {
	if r.Problems.HasErrors() || len(r.Cases) == 0 {
		return false
	}
	return r.Failed() == 0
}

// Failed counts the failed cases.
func (r *Report) Failed() int {
	n := 0
	for _, c := range r.Cases {
		if !c.Passed() {
			n++
		}
	}
	return n
}

// Write prints the report: every failure with its case's position and
// details, every case when verbose, and a summary line.
func (r *Report) Write(w io.Writer, verbose bool) {
	for _, d := range r.Problems.Items {
		fmt.Fprintln(w, d.String())
	}
	if r.Problems.HasErrors() {
		fmt.Fprintf(w, "FAIL %s: the document or its tests have errors; no case ran\n", r.Plugin)
		return
	}
	for _, c := range r.Cases {
		ms := strconv.FormatInt(c.Duration.Milliseconds(), 10) + "ms"
		if c.Passed() {
			if verbose {
				fmt.Fprintf(w, "--- PASS: %s: %s (%s)\n", c.Pos, c.Name, ms)
			}
			continue
		}
		fmt.Fprintf(w, "--- FAIL: %s: %s (tool %s, %s)\n", c.Pos, c.Name, c.Tool, ms)
		for _, f := range c.Failures {
			fmt.Fprintln(w, indent(f, "    "))
		}
	}
	switch {
	case len(r.Cases) == 0:
		fmt.Fprintf(w, "FAIL %s: no test cases (add tests/NAME.yaml or a \"yaml test NAME\" block)\n", r.Plugin)
	case r.Failed() == 0:
		fmt.Fprintf(w, "ok   %s: %s passed\n", r.Plugin, plural(len(r.Cases), "case"))
	default:
		fmt.Fprintf(w, "FAIL %s: %d of %s failed\n", r.Plugin, r.Failed(), plural(len(r.Cases), "case"))
	}
}

// RunDir reads a document from disk and runs its tests.
func RunDir(ctx context.Context, path string, opts Options) (*Report, error) {
	files, err := manifest.ReadDir(path)
	if err != nil {
		return nil, err
	}
	rep := RunFiles(ctx, files, opts)
	if rep.Plugin == "" {
		rep.Plugin = path
	}
	return rep, nil
}

// RunFiles parses a document's files and runs its tests.
func RunFiles(ctx context.Context, files manifest.Files, opts Options) *Report {
	p, l := manifest.Parse(files)
	if l.HasErrors() {
		return &Report{Plugin: p.ID, Problems: l}
	}
	return Run(ctx, p, opts)
}

// Run runs a parsed document's tests. Each case gets its own replay
// servers, proxy, keystore and store.
func Run(ctx context.Context, p *manifest.Plugin, opts Options) *Report {
	rep := &Report{Plugin: p.ID}
	if opts.Host != nil {
		opts.Catalogue, opts.Clock = opts.Host.Catalogue(), opts.Host.Clock()
	}
	base := opts.Catalogue
	if base == nil {
		base = proxy.Builtin()
	}
	suite, l := Parse(p)
	// Cases run one at a time: each sets the instant now reports.
	var caseNow atomic.Pointer[time.Time]
	clock := func() time.Time {
		if at := caseNow.Load(); at != nil {
			return *at
		}
		if opts.Clock != nil {
			return opts.Clock()
		}
		return time.Now()
	}
	// The document's compile problems, once: each case compiles it again
	// for its own replay servers.
	_, cl := host.New(host.Config{Catalogue: base, Clock: clock}).Load(p)
	l.Merge(cl)
	l.Sort()
	rep.Problems = l
	if l.HasErrors() {
		return rep
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	tlsCfg, roots, err := replayTLS(p.Access.Web)
	if err != nil {
		rep.Problems.Errorf(diag.Pos{File: "PLUGIN.md"}, "the replay servers of the web origins: %v", err)
		return rep
	}
	env := &replayEnv{base: base, clock: clock, tls: tlsCfg, roots: roots}
	for _, c := range suite.Cases() {
		if opts.Match != nil && !opts.Match(c.File, c.Name) {
			continue
		}
		caseNow.Store(c.Now)
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, timeout)
		fails := runCase(cctx, p, env, c)
		cancel()
		rep.Cases = append(rep.Cases, CaseResult{File: c.File, Name: c.Name, Pos: c.Pos, Tool: c.Tool, Failures: fails, Duration: time.Since(start)})
	}
	return rep
}

// outcome is what one call came to.
type outcome struct {
	result    *interpreter.Result
	value     any // the result decoded from its JSON
	err       error
	refused   *registry.RefusedError
	askReason registry.Reason // the reason a call asked before it was settled
}

// replayEnv is what every case of a run shares: the catalogue, the clock
// and the replay servers' certificate and the authority the proxy trusts.
type replayEnv struct {
	base  proxy.Catalogue
	clock func() time.Time
	tls   *tls.Config
	roots *x509.CertPool
}

func runCase(ctx context.Context, p *manifest.Plugin, renv *replayEnv, c *Case) []string {
	services := make([]string, 0, len(p.Access.Campus))
	for _, ca := range p.Access.Campus {
		services = append(services, ca.Service)
	}
	// Every declared service and web origin is answered by a loopback
	// server of the case: no request ever leaves this process.
	rp, cat, resolve := newReplay(c, services, p.Access.Web, renv.base, renv.tls)
	defer rp.close()
	clock := renv.clock
	h := host.New(host.Config{Catalogue: cat, Keystore: proxy.MemKeystore(c.Secrets), Resolve: resolve, RootCAs: renv.roots, Clock: clock})
	doc, l := h.Load(p)
	if l.HasErrors() {
		return []string{"the document does not compile against the replay servers: " + l.Err().Error()}
	}
	kv := &steps.MemKV{}
	for _, k := range sortedKeys(c.KV) {
		if err := kv.Set(k, steps.FromGo(normalize(c.KV[k]))); err != nil {
			return []string{"the case's kv cannot be stored: " + err.Error()}
		}
	}
	runner := registry.RunnerFunc(func(ctx context.Context, req registry.RunRequest) (any, error) {
		prefs := req.Prefs
		if c.Prefs != nil {
			prefs = c.Prefs
		}
		res, err := doc.Run(ctx, host.Call{Tool: req.Tool, Input: req.Input, Checked: true, Trust: req.Trust, Prefs: prefs, KV: kv,
			Actor: req.Actor, Turn: req.Turn, Grant: req.Grant})
		if err != nil {
			return nil, err
		}
		return &res, nil
	})
	reg := registry.New(registry.WithCompiler(func(*manifest.Plugin) (registry.Runner, error) { return runner, nil }), registry.WithClock(clock))
	if _, err := reg.AddDocument(p, registry.Trust(c.Trust), registry.DocOptions{}); err != nil {
		return []string{"the document cannot be registered: " + err.Error()}
	}
	call := registry.Call{Tool: p.ID + "." + c.Tool, Actor: registry.Actor(c.Actor), Tainted: c.Tainted, Input: c.Input}
	var out outcome
	if d := reg.Decide(call); d.Ask {
		out.askReason = d.Reason
	}
	var ap registry.Approver
	if c.Approve != nil {
		yes := *c.Approve
		ap = registry.ApproverFunc(func(context.Context, registry.ApprovalRequest) (bool, error) { return yes, nil })
	}
	env, err := reg.Invoke(ctx, call, ap)
	switch {
	case errors.As(err, &out.refused):
	case err != nil:
		out.err = err
	default:
		res, ok := env.Data.(*interpreter.Result)
		if !ok {
			out.err = fmt.Errorf("the runner returned %T", env.Data)
			break
		}
		out.result = res
		if out.value, err = decodeJSON(res.JSON); err != nil {
			out.err = fmt.Errorf("the result is not JSON: %v", err)
			out.result = nil
		}
	}
	var fails []string
	fails = append(fails, check(ctx, c, &out)...)
	fails = append(fails, checkSchema(p, c, &out)...)
	fails = append(fails, checkKV(c, kv)...)
	fails = append(fails, rp.takeProblems()...)
	if out.refused == nil && out.err == nil {
		for _, e := range rp.unused() {
			fails = append(fails, fmt.Sprintf("the exchange at %s (%s %s%s) was never requested", e.Pos, e.Method, e.Origin, e.Path))
		}
	}
	fails = append(fails, leaks(c, &out)...)
	return fails
}

// check compares the outcome with the case's expectations.
func check(ctx context.Context, c *Case, o *outcome) []string {
	e := c.Expect
	got := describe(o)
	switch {
	case e.Refused != "":
		if o.refused == nil {
			return []string{"expected a refusal (" + e.Refused + "), got " + got}
		}
		r := string(o.refused.Decision.Reason)
		if e.Refused != "any" && e.Refused != r && e.Refused != string(o.askReason) {
			why := r
			if o.askReason != "" {
				why = string(o.askReason) + ", then " + r
			}
			return []string{fmt.Sprintf("expected refusal %s, got refusal %s: %s", e.Refused, why, o.refused.Error())}
		}
		return nil
	case e.Error != "":
		if o.err == nil {
			return []string{"expected a failure containing " + strconv.Quote(e.Error) + ", got " + got}
		}
		if !strings.Contains(o.err.Error(), e.Error) {
			return []string{"the failure message differs:\n  expected it to contain: " + e.Error + "\n  got: " + o.err.Error()}
		}
		return nil
	}
	if o.result == nil {
		return []string{"expected a result, got " + got}
	}
	var fails []string
	if e.Status != "" && o.result.Status != e.Status {
		fails = append(fails, fmt.Sprintf("expected status %s, got status %s; the result:\n%s", e.Status, cmp.Or(o.result.Status, "none"), indent(pretty(o.value), "  ")))
	}
	if e.HasOutput && !equal(e.Output, o.value) {
		fails = append(fails, "the result differs:\n"+indent(diffLines(pretty(e.Output), pretty(o.value)), "  "))
	}
	for _, a := range e.JQ {
		v, err := first(ctx, a, o.value)
		switch {
		case err != nil:
			fails = append(fails, fmt.Sprintf("jq assertion at %s: %s: %v", a.Pos, a.Src, err))
		case a.HasEquals && !equal(a.Equals, normalize(v)):
			fails = append(fails, fmt.Sprintf("jq assertion at %s: %s\n%s", a.Pos, a.Src, indent(diffLines(pretty(a.Equals), pretty(normalize(v))), "  ")))
		case !a.HasEquals && v != true:
			fails = append(fails, fmt.Sprintf("jq assertion at %s is not true: %s (it gave %s); the result:\n%s", a.Pos, a.Src, compact(v), indent(pretty(o.value), "  ")))
		}
	}
	return fails
}

// checkSchema checks the result a case yields, whatever the case expects,
// against its tool's output schema (registry.CheckOutput, the check a
// widget's data source makes): the whole result (Full, not the model's cut
// copy), a status object too. The failure names the tool's output schema
// by FILE:LINE:COL and the keywords that refused the value, and quotes
// nothing of the result.
func checkSchema(p *manifest.Plugin, c *Case, o *outcome) []string {
	if o.result == nil {
		return nil
	}
	full := o.result.Full
	if full == nil {
		full = o.result.JSON
	}
	if msg := SchemaProblem(p, c.Tool, full); msg != "" {
		return []string{msg}
	}
	return nil
}

// SchemaProblem says how result (JSON text or decoded JSON) of document p's
// tool fails the tool's output schema (registry.CheckOutput), naming the
// schema by FILE:LINE:COL and the keywords that refused it and quoting
// nothing of the result; "" when it conforms or there is no schema.
func SchemaProblem(p *manifest.Plugin, tool string, result any) string {
	var oe *registry.OutputError
	if err := registry.CheckOutput(p, tool, result); !errors.As(err, &oe) {
		return ""
	}
	if oe.NotJSON {
		return fmt.Sprintf("the result is not JSON, so it cannot be checked against the output schema of tool %s (%s)", tool, oe.SchemaPos)
	}
	msg := fmt.Sprintf("the result does not match the output schema of tool %s (%s): refused by %s", tool, oe.SchemaPos, oe.RefusedBy)
	if oe.Status != "" {
		msg += fmt.Sprintf(" (it is a status object, status %s: the output schema must allow the status objects the tool can end with, e.g. with anyOf)", oe.Status)
	}
	return msg
}

// first runs an assertion on the result, within the case's time and the
// step limits (a heap watch stops a program that grows a value without
// end): its first output.
func first(ctx context.Context, a Assertion, v any) (any, error) {
	ctx, stop, grown := interpreter.WatchHeap(ctx, steps.DefaultLimits().HeapBytes)
	defer stop()
	x, ok, err := a.Code.Run1(ctx, steps.FromGo(v))
	switch {
	case grown():
		return nil, fmt.Errorf("it grew the process heap over %d bytes", steps.DefaultLimits().HeapBytes)
	case ctx.Err() != nil:
		return nil, errors.New("it did not end within the case's time limit")
	case err != nil:
		return nil, err
	case !ok:
		return nil, errors.New("it gave no result")
	}
	return x, nil
}

func compact(v any) string {
	b, err := marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// describe renders what the call came to, for messages.
func describe(o *outcome) string {
	switch {
	case o.refused != nil:
		return "a refusal (" + string(o.refused.Decision.Reason) + "): " + o.refused.Error()
	case o.err != nil:
		return "a failure: " + o.err.Error()
	case o.result != nil:
		return "a result:\n" + indent(pretty(o.value), "  ")
	}
	return "nothing"
}

// leaks reports any session value of the case that shows in the result or
// the error message (names only, never the value).
func leaks(c *Case, o *outcome) []string {
	var text string
	switch {
	case o.result != nil:
		text = string(o.result.JSON)
	case o.err != nil:
		text = o.err.Error()
	case o.refused != nil:
		text = o.refused.Error()
	}
	var out []string
	for _, svc := range sortedKeys(c.Secrets) {
		ss := c.Secrets[svc]
		if ss == nil {
			continue
		}
		for _, kind := range []struct {
			what string
			m    map[string]string
		}{{"cookie", ss.Cookies}, {"header", ss.Headers}} {
			for _, name := range sortedKeys(kind.m) {
				if v := kind.m[name]; v != "" && strings.Contains(text, v) {
					out = append(out, fmt.Sprintf("the %s %s of %s (a session value) appears in the output", kind.what, name, svc))
				}
			}
		}
	}
	return out
}

// storedJSON is the value of key k of a plugin's store as JSON data (nil:
// absent).
func storedJSON(kv steps.KV, k string) (any, error) {
	v, ok, err := kv.Get(k)
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %v", err)
	}
	if !ok {
		return nil, nil
	}
	b, err := steps.Encode(v, 256)
	if err == nil {
		v, err = decodeJSON(b)
	}
	if err != nil {
		return nil, errors.New("does not hold JSON")
	}
	return v, nil
}

// checkKV compares the listed keys of the plugin's store after the call.
func checkKV(c *Case, kv *steps.MemKV) []string {
	var out []string
	for _, k := range sortedKeys(c.Expect.KV) {
		got, err := storedJSON(kv, k)
		if err != nil {
			out = append(out, fmt.Sprintf("the store's key %q %v", k, err))
			continue
		}
		if want := c.Expect.KV[k]; !equal(want, got) {
			out = append(out, fmt.Sprintf("the store's key %q differs:\n%s", k, indent(diffLines(pretty(want), pretty(got)), "  ")))
		}
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
