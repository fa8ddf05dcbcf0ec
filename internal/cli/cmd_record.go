package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/internal/simcampus"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/pkuinfo/harness/registry"
	"github.com/spf13/cobra"
)

func init() { register(52, newRecordCmd) }

type recordFlags struct {
	runFlags
	out   string
	force bool
	scrub []string
	name  string
}

func newRecordCmd(app *App) *cobra.Command {
	var f recordFlags
	cmd := &cobra.Command{
		Use:   "record PATH TOOL [--input JSON] [-o tests/NAME.yaml] [--scrub VALUE]...",
		Short: "Run a tool live and write the run as a replayable test case",
		Long: `record runs one tool of a local document as harness run does (the same flags:
--campus, --services, --secrets or the home keystore, --resolve, --ca, ...) and writes a test
case holding every exchange as the steps saw it and the result as the expectation.
Credentials never reach the steps, so they never reach the file; fake session values
stand for them. Each --scrub VALUE (a student id, a name) is replaced by a placeholder
of its shape, the same value always by the same placeholder, in the input, the
exchanges and the expectation; what harness login keeps of the student (the user
name and name) and, with --campus, the simulated campus's student id and name are
scrubbed too. The case is replayed before it is written: a case that would
not pass offline is not written.

-o is relative to the document's folder (default tests/TOOL.yaml); an existing file
is never replaced without --force. A document with the kv ability runs on an empty
store in memory (the home's store is not touched) and the keys it sets become the
case's expect.kv.

Exit 0 written; 1 the run failed or cannot be recorded (nothing written); 2 usage;
3 refused by the permission rules.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if rest, _ := f.trace.split(args, 2); len(rest) != 2 {
				return Exitf(ExitUsage, "record needs PATH (a local document) and TOOL")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			args = f.trace.takeValue(args, 2)
			return recordTool(cmd.Context(), app, args[0], args[1], &f)
		},
	}
	fl := cmd.Flags()
	f.add(fl, "trust of the document: official or community")
	fl.StringVarP(&f.out, "output", "o", "", "the test file to write, relative to the document's folder (default tests/TOOL.yaml)")
	fl.BoolVar(&f.force, "force", false, "replace an existing test file")
	fl.StringArrayVar(&f.scrub, "scrub", nil, "a personal value to replace by a placeholder (repeatable)")
	fl.StringVar(&f.name, "name", "", "the case's name (default: recorded TOOL)")
	return cmd
}

var testFileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func recordTool(ctx context.Context, app *App, path, toolName string, f *recordFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	traceMode, traced, err := f.check()
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return Exitf(ExitUsage, "record needs a local document (a folder or a PLUGIN.md): %v", err)
	}
	// Where the case goes.
	folder := path
	if !st.IsDir() {
		folder = filepath.Dir(path)
		if f.out == "" {
			return Exitf(ExitUsage, "%s is a single-file document, whose tests are \"yaml test NAME\" blocks: pass -o FILE and paste the case into a block", path)
		}
	}
	out := f.out
	if out == "" {
		out = filepath.Join("tests", toolName+".yaml")
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(folder, out)
	}
	base := filepath.Base(out)
	ext := filepath.Ext(base)
	name := strings.TrimSuffix(base, ext)
	if ext != ".yaml" && ext != ".yml" || !testFileName.MatchString(name) {
		return Exitf(ExitUsage, "-o %s: a test file is NAME.yaml (letters, digits, '-', '_', '.')", f.out)
	}
	if _, err := os.Stat(out); err == nil && !f.force {
		return Exitf(ExitFailed, "%s exists: pass --force to replace it, or -o another file", out)
	}
	for _, v := range f.scrub {
		if len([]rune(v)) < plugintest.MinScrubRunes || strings.TrimSpace(v) != v {
			return Exitf(ExitUsage, "--scrub values must have at least %d characters and no surrounding spaces", plugintest.MinScrubRunes)
		}
	}

	p, l, err := loadLocal(path)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	if l.HasErrors() {
		printDiagnostics(app.Stderr, l)
		return Exitf(ExitFailed, "%q is not a valid document (see harness lint)", path)
	}
	if p.Tool(toolName) == nil {
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
	if f.approve.always() {
		app.warn("record answers an ask once: a test case replays one call, and no standing grant is kept for it")
	}
	d := registry.CheckRun(ctx, registry.RunCheck{Plugin: p, Trust: registry.Trust(f.trust), Tool: toolName,
		Actor: registry.Actor(f.actor), Tainted: f.tainted, Approve: f.approve.yes(), Input: in})
	if !d.Allow {
		if d.ExitCode() == ExitUsage {
			return Exit(ExitUsage, errors.New(d.Message))
		}
		return Exit(d.ExitCode(), errors.New("refused: "+d.Message))
	}

	// The run stands at one instant, which the case fixes as its now.
	now, err := app.Now()
	if err != nil {
		return err
	}
	now = now.Truncate(time.Second)
	hf := f.hostFlags
	hf.clock = func() time.Time { return now }
	h, stop, err := openHost(app, hf, prefsNeeded(p))
	if err != nil {
		return err
	}
	defer stop()
	doc, dl := h.Load(p)
	if dl.HasErrors() {
		printDiagnostics(app.Stderr, dl)
		return Exitf(ExitFailed, "tool %q does not compile", toolName)
	}
	call := host.Call{Tool: toolName, Input: d.Input, Checked: true, Trust: registry.Trust(f.trust),
		Actor: registry.Actor(f.actor), Turn: callerTurn(f.actor, f.tainted), Grant: string(d.Grant)}
	if prefsNeeded(p) && h.Home() != "" {
		home := &registry.HomeStore{Dir: h.Home()}
		if call.Prefs, err = home.Prefs(registry.PrefsKey(p.ID, call.Trust)); err != nil {
			return Exit(ExitFailed, err)
		}
	}
	if traced {
		call.Trace, call.TraceMode = app.Stderr, traceMode
	}
	opts := plugintest.RecordOptions{Name: f.name, Actor: f.actor, Trust: f.trust, Tainted: f.tainted, Now: &now}
	if d.Grant != "" { // the user was asked (the decision has settled the ask by now)
		yes := true
		opts.Approve = &yes
	}
	rec, err := plugintest.Record(ctx, doc, call, opts)
	if err != nil {
		return Exitf(ExitFailed, "the run cannot be recorded: %v", err)
	}
	if rec.Err != nil {
		var ue *host.UnknownServiceError
		if errors.As(rec.Err, &ue) {
			return Exitf(ExitFailed, "%s: tool %q calls campus service %q, which neither the built-in catalogue nor --services knows; nothing recorded", ue.Pos, ue.Tool, ue.Service)
		}
		return Exitf(ExitFailed, "%v (the run failed: nothing recorded)", rec.Err)
	}
	if msg := plugintest.SchemaProblem(p, toolName, rec.Result); msg != "" {
		return Exitf(ExitFailed, "%s; nothing was written", msg)
	}
	scrub := append([]string(nil), f.scrub...)
	if f.campus {
		scrub = append(scrub, simcampus.DemoStudentID, simcampus.DemoStudentName)
	}
	text, err := rec.TestFile(plugintest.WriteOptions{Scrub: scrub})
	if err != nil {
		return Exitf(ExitFailed, "the run cannot be written as a test case: %v", err)
	}
	rep := plugintest.Verify(ctx, p, name, text, plugintest.Options{Host: h})
	if !rep.OK() {
		rep.Write(app.Stderr, false)
		return Exitf(ExitFailed, "the recorded case does not pass when replayed, so nothing was written (a result that depends on the replay's addresses, such as .url of a campus request, cannot be recorded)")
	}
	if err := plugintest.WriteCase(out, text, f.force); err != nil {
		return Exit(ExitFailed, err)
	}
	fmt.Fprintln(app.Stdout, string(rec.Result))
	n := len(rec.Case.Exchanges)
	fmt.Fprintf(app.Stderr, "wrote %s: case %q, %s, replayed and passing\n", out, rec.Case.Name, pluralize(n, "exchange"))
	if rel, err := filepath.Rel(filepath.Join(folder, "tests"), out); !st.IsDir() || err != nil || rel != base {
		fmt.Fprintf(app.Stderr, "note: harness test reads a document's tests/*.yaml (and \"yaml test NAME\" blocks of PLUGIN.md): %s is not one of them\n", out)
	}
	return nil
}

func pluralize(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
