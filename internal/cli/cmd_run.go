package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/steps"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func init() { register(50, newRunCmd) }

// MaxInputBytes bounds --input.
const MaxInputBytes = 1 << 20

type runFlags struct {
	hostFlags
	input   string
	actor   string
	tainted bool
	approve approveFlag
	trust   string
	trace   traceFlags // trace_flag.go
	full    bool
}

func newRunCmd(app *App) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run PATH|ID TOOL",
		Short: "Run one tool of a document and print its result JSON",
		Long: `run loads a document (a local folder or PLUGIN.md, or an installed ID), checks
the permission rules, validates --input against the tool's schema, runs the
steps through the credential-signing proxy and prints the result JSON: the
model's copy, cut to the output limit (12,000 characters) as the agent sees it;
--full prints the whole result, as the user's screen shows it.

Exit 0: a result was printed (a status object such as login_required is a
result); 1: the tool failed (message on stderr); 2: usage error (no such document
or tool, bad flags, input failing the schema); 3: refused by the permission rules.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if rest, _ := f.trace.split(args, 2); len(rest) != 2 {
				if len(rest) == 3 && (rest[2] == "always" || rest[2] == "once") && f.approve.yes() {
					return Exitf(ExitUsage, "write --approve=%s, with =: --approve alone answers once", rest[2])
				}
				return Exitf(ExitUsage, "run needs PATH|ID and TOOL")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			args = f.trace.takeValue(args, 2)
			return runTool(cmd.Context(), app, args[0], args[1], &f)
		},
	}
	f.add(cmd.Flags(), "trust of a local document: official or community")
	cmd.Flags().BoolVar(&f.full, "full", false, "print the whole result, not the model's copy cut to the output limit")
	return cmd
}

// check refuses bad values of the shared flags (exit 2) and returns the
// trace mode.
func (f *runFlags) check() (interpreter.TraceMode, bool, error) {
	switch f.actor {
	case "user", "agent", "scheduler":
	default:
		return 0, false, Exitf(ExitUsage, "--actor must be user, agent or scheduler, not %q", f.actor)
	}
	if f.trust != "official" && f.trust != "community" {
		return 0, false, Exitf(ExitUsage, "--trust must be official or community, not %q", f.trust)
	}
	if _, err := parseResolve(f.resolve); err != nil {
		return 0, false, Exit(ExitUsage, err)
	}
	return f.trace.mode()
}

// add registers the flags of a command that runs one tool (run, record).
func (f *runFlags) add(fl *pflag.FlagSet, trustDoc string) {
	fl.StringVar(&f.input, "input", "{}", "the tool's input, a JSON object")
	fl.StringVar(&f.actor, "actor", "user", "who calls: user, agent or scheduler")
	fl.BoolVar(&f.tainted, "tainted", false, "the turn read untrusted content")
	fl.Var(&f.approve, "approve", "answer yes where the rules would ask: once (--approve), or always (--approve=always: a standing grant, so later runs of the tool do not ask; harness revoke takes it back)")
	fl.Lookup("approve").NoOptDefVal = "once"
	fl.StringVar(&f.trust, "trust", "community", trustDoc)
	fl.StringVar(&f.services, "services", "", "campus service catalogue entries (YAML), over the built-in ones")
	fl.StringVar(&f.secrets, "secrets", "", "session credentials per campus service (YAML)")
	fl.StringArrayVar(&f.resolve, "resolve", nil, "HOST:PORT:ADDR: connect to ADDR for a declared web origin (repeatable)")
	f.trace.add(fl)
	fl.StringVar(&f.ca, "ca", "", "PEM certificates trusted, beside the system roots, for the hosts --resolve maps only")
	fl.BoolVar(&f.campus, "campus", false, "run against the simulated campus started in this process (its services and a demo session)")
}

func runTool(ctx context.Context, app *App, arg, toolName string, f *runFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	traceMode, traced, err := f.check()
	if err != nil {
		return err
	}
	if _, statErr := os.Stat(arg); statErr != nil && isRemote(app, arg) {
		return runRemote(ctx, app, arg, toolName, f)
	}
	// The document: a local path, else an installed ID.
	var p *manifest.Plugin
	var modes registry.Store // the stored modes of an installed or bundled document
	trust := f.trust
	if _, statErr := os.Stat(arg); statErr == nil {
		doc, l, err := loadLocal(arg)
		if err != nil {
			return Exit(ExitFailed, err)
		}
		if l.HasErrors() {
			printDiagnostics(app.Stderr, l)
			return Exitf(ExitFailed, "%q is not a valid document (see harness lint)", arg)
		}
		p = doc
	} else {
		doc, tr, st, err := resolveID(ctx, app, arg)
		if err != nil {
			return err
		}
		p, trust, modes = doc, tr, st
	}
	t := p.Tool(toolName)
	if t == nil {
		names := make([]string, 0, len(p.Tools))
		for _, x := range p.Tools {
			names = append(names, x.Name)
		}
		return Exitf(ExitUsage, "document %s has no tool %q (tools: %s)", p.ID, toolName, strings.Join(names, ", "))
	}
	input, err := parseInput(f.input)
	if err != nil {
		return Exit(ExitUsage, err)
	}
	in, _ := input.(map[string]any)
	clock, err := app.Clock()
	if err != nil {
		return err
	}
	d := registry.CheckRun(ctx, registry.RunCheck{Plugin: p, Trust: registry.Trust(trust), Tool: toolName,
		Actor: registry.Actor(f.actor), Tainted: f.tainted, Approve: f.approve.yes(), Always: f.approve.always(), Input: in, Store: modes, Now: clock})
	if !d.Allow {
		if d.ExitCode() == ExitUsage {
			return Exit(ExitUsage, errors.New(d.Message))
		}
		msg := d.Message
		if modes != nil {
			// an installed or bundled document: its modes can be set
			if h := registry.AllowHint(d, registry.RunAsker); h != "" {
				msg = strings.TrimSuffix(msg, "; pass --approve") + "; " + h
			}
		}
		return Exit(d.ExitCode(), errors.New("refused: "+msg))
	}
	if f.approve.always() && d.Grant == registry.AnswerOnce {
		app.warn(fmt.Sprintf("%s.%s was allowed once, not always: %s", p.ID, toolName, onceWhy(d, modes != nil, f.tainted)))
	} else if d.Reason == registry.ReasonGranted {
		fmt.Fprintf(app.Stderr, "harness: %s.%s runs without asking: the user allowed it always (harness revoke %s %s takes that back)\n", p.ID, toolName, p.ID, toolName)
	} else if d.Grant == registry.AnswerAlways {
		fmt.Fprintf(app.Stderr, "harness: %s.%s is allowed always from now on for the agent (harness revoke %s %s takes it back)\n", p.ID, toolName, p.ID, toolName)
	}

	needHome := p.HasAbility("kv") || prefsNeeded(p)
	h, stop, err := openHost(app, f.hostFlags, needHome)
	if err != nil {
		return err
	}
	defer stop()
	doc, l := h.Load(p)
	if l.HasErrors() {
		printDiagnostics(app.Stderr, l)
		return Exitf(ExitFailed, "tool %q does not compile", toolName)
	}
	call := host.Call{Tool: toolName, Input: d.Input, Checked: true, Trust: registry.Trust(trust),
		Actor: registry.Actor(f.actor), Turn: callerTurn(f.actor, f.tainted), Grant: string(d.Grant)}
	if traced {
		call.Trace, call.TraceMode = app.Stderr, traceMode
	}
	res, err := doc.Run(ctx, call)
	if err != nil {
		var ue *host.UnknownServiceError
		switch {
		case host.IsInputError(err):
			return Exit(ExitUsage, err)
		case errors.As(err, &ue):
			return Exitf(ExitFailed, "%s: tool %q calls campus service %q, which neither the built-in catalogue nor --services knows", ue.Pos, ue.Tool, ue.Service)
		}
		return Exit(ExitFailed, err)
	}
	out := res.JSON // the model's copy, cut as the agent would see it
	if f.full {
		out = res.Full
	}
	fmt.Fprintln(app.Stdout, string(out))
	return nil
}

// hostFlags are the flags of the commands that run tools: where the campus
// services are and the sessions that sign them.
type hostFlags struct {
	services string
	secrets  string
	resolve  []string
	ca       string // --ca: PEM roots for the --resolve hosts
	campus   bool
	replay   bool // the runs bring their own sessions: no keystore is opened
	memory   bool // the plugins' stores live in memory: the home holds only the keystore read
	// clock, when set, replaces the app's clock (a recording's instant).
	clock func() time.Time
}

// openHost builds a command's one host from its flags: the catalogue (the
// built-in one, over it --services or the simulated campus's services), the
// keystore (--secrets, the campus's demo session, else the home folder's),
// --resolve, the clock (HARNESS_NOW) and the home folder. needHome makes a
// home folder that cannot be found an error. stop ends the simulated
// campus; it is never nil.
func openHost(app *App, f hostFlags, needHome bool) (*host.Host, func(), error) {
	nop := func() {}
	resolve, err := parseResolve(f.resolve)
	if err != nil {
		return nil, nop, Exit(ExitUsage, err)
	}
	clock, err := app.Clock()
	if err != nil {
		return nil, nop, err
	}
	if f.clock != nil {
		clock = f.clock
	}
	ca, err := readCA(f.ca, resolve)
	if err != nil {
		return nil, nop, Exit(ExitUsage, err)
	}
	cfg := host.Config{Catalogue: proxy.Builtin(), Resolve: resolve, ResolveCA: ca, Clock: clock}
	stop := nop
	if f.campus {
		if f.services != "" || f.secrets != "" {
			return nil, nop, Exitf(ExitUsage, "--campus brings its own services and session: leave out --services and --secrets")
		}
		over, sec, end, err := startCampus(clock)
		if err != nil {
			return nil, nop, Exit(ExitFailed, err)
		}
		stop = end
		cfg.Catalogue = cfg.Catalogue.Merge(over)
		cfg.Keystore = proxy.MemKeystore(sec)
		cfg.Sealed = campusSealed
	}
	fail := func(code int, err error) (*host.Host, func(), error) {
		stop()
		return nil, nop, Exit(code, err)
	}
	if f.services != "" {
		over, err := proxy.LoadServices(f.services)
		if err != nil {
			return fail(ExitUsage, err)
		}
		cfg.Catalogue = cfg.Catalogue.Merge(over)
	}
	dir, herr := app.Home()
	if herr == nil && !f.memory {
		cfg.Home = dir
	} else if herr != nil && needHome {
		return fail(ExitFailed, herr)
	}
	if f.secrets != "" {
		sec, err := host.ReadSecretsFile(f.secrets, app.warn)
		if err != nil {
			return fail(ExitUsage, err)
		}
		cfg.Keystore = proxy.MemKeystore(sec)
	} else if cfg.Keystore == nil && herr == nil && !f.replay {
		ks, err := host.HomeKeystore(dir)
		if err != nil {
			return fail(ExitFailed, err)
		}
		cfg.Keystore = ks
	}
	return host.New(cfg), stop, nil
}

func parseInput(s string) (any, error) {
	if len(s) > MaxInputBytes {
		return nil, fmt.Errorf("--input is longer than %d bytes", MaxInputBytes)
	}
	v, err := steps.DecodeJSON([]byte(s), 64)
	if err != nil {
		return nil, fmt.Errorf("--input is not JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("--input must be a JSON object")
	}
	return v, nil
}

// approveFlag is --approve: "" (no), once, or always. --approve alone is
// once; --approve=true (or another word strconv.ParseBool reads) keeps
// meaning once as the boolean flag did, and false no.
type approveFlag string

func (a *approveFlag) String() string { return string(*a) }
func (a *approveFlag) Type() string   { return "once|always" }
func (a *approveFlag) Set(s string) error {
	switch s {
	case "once", "always":
		*a = approveFlag(s)
		return nil
	case "no", "":
		*a = ""
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("must be once or always (or true, false), not %q", s)
	}
	*a = ""
	if b {
		*a = "once"
	}
	return nil
}

func (a approveFlag) yes() bool    { return a != "" }
func (a approveFlag) always() bool { return a == "always" }

// onceWhy says why --approve=always gave no standing grant.
func onceWhy(d registry.Decision, stored, tainted bool) string {
	t := d.Tool
	switch {
	case !stored:
		return "a standing grant is kept only for an installed or bundled document (harness run ID TOOL)"
	case t == nil || t.Document() == nil:
	case t.AlwaysAsk:
		return "the tool asks before every call"
	case t.Effect == manifest.Money:
		return "money tools ask before every call"
	case registry.Loosest(t.Document().Trust, t.Effect) != manifest.Auto:
		return fmt.Sprintf("a %s plugin's %s tools ask before every call", t.Document().Trust, t.Effect)
	case tainted:
		return "a standing grant is given only in a turn that read no untrusted data"
	}
	return d.Message
}

func prefsNeeded(p *manifest.Plugin) bool { return len(p.Preferences) > 0 }

// callerTurn is the turn $turn shows for a command-line call: an agent's
// call is one turn of its own, tainted as --tainted says; the user's and
// the scheduler's calls have none.
func callerTurn(actor string, tainted bool) *registry.TurnInfo {
	if actor != string(registry.Agent) {
		return nil
	}
	return &registry.TurnInfo{Tainted: tainted}
}
