package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/spf13/cobra"
)

func init() {
	register(80, newTestCmd)
	documentChecks = append(documentChecks, checkTests)
}

// checkTests makes lint report the problems of a document's test files
// (tests/*.yaml and "yaml test NAME" blocks) as it reports the rest.
func checkTests(p *manifest.Plugin) diag.List {
	if p == nil || len(p.Tests) == 0 {
		return diag.List{}
	}
	_, l := plugintest.Parse(p)
	return l
}

func newTestCmd(app *App) *cobra.Command {
	var (
		verbose  bool
		run      string
		services string
		asJSON   bool
		junit    string
		watching bool
	)
	cmd := &cobra.Command{
		Use:   "test PATH...",
		Short: "Run a document's own test cases against recorded exchanges",
		Long: `test runs the cases of a document's tests/*.yaml files and "yaml test NAME" blocks.
Each case's recorded exchanges are served on loopback and every request goes through the
real signing proxy; nothing leaves this machine. Failures are printed with the case's
FILE:LINE:COL and a diff. jq's now is a case's own now:, else HARNESS_NOW (running on
from that instant), else the real time. Exit 0 when every case of every document
passes, 1 otherwise.

--json prints the results as one JSON object on stdout instead; --junit FILE also
writes them as JUnit XML for CI. --watch runs again each time a file under the
paths changes, until interrupted.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var match func(file, name string) bool
			if run != "" {
				re, err := regexp.Compile(run)
				if err != nil {
					return Exitf(ExitUsage, "--run %q is not a regular expression: %v", run, err)
				}
				match = func(file, name string) bool { return re.MatchString(file + "/" + name) }
			}
			// The one host gives the catalogue and the clock; each case
			// runs on its replay servers with its own sessions, so the
			// home keystore is not opened.
			h, stop, err := openHost(app, hostFlags{services: services, replay: true}, false)
			if err != nil {
				return err
			}
			defer stop()
			once := func(ctx context.Context) error {
				tr := runTests(ctx, app, args, plugintest.Options{Host: h, Match: match}, verbose, !asJSON)
				if asJSON {
					enc := json.NewEncoder(app.Stdout)
					enc.SetIndent("", "  ")
					_ = enc.Encode(tr.json())
				}
				if junit != "" {
					if err := writeJUnit(junit, tr, time.Now()); err != nil {
						return Exit(ExitFailed, err)
					}
				}
				if !tr.ok() {
					return Exit(ExitFailed, nil)
				}
				return nil
			}
			if watching {
				return watch(cmd.Context(), app, args, func(ctx context.Context) {
					if err := once(ctx); err != nil {
						if msg := err.Error(); msg != "" {
							fmt.Fprintln(app.Stderr, "harness: "+terminalSafe(msg))
						}
					}
				})
			}
			return once(cmd.Context())
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list every case, not only the failures")
	cmd.Flags().StringVar(&run, "run", "", "run only the cases whose FILE/NAME matches this regular expression")
	cmd.Flags().StringVar(&services, "services", "", "campus service catalogue entries (session names, login signals); origins are replaced by the replay servers")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON on stdout (docs/plugin-format.md, Reports)")
	cmd.Flags().StringVar(&junit, "junit", "", "also write the results to `FILE` as JUnit XML, for CI")
	cmd.Flags().BoolVar(&watching, "watch", false, "run again each time a file under the paths changes, until interrupted")
	return cmd
}

// runTests runs the tests of each path; print writes the person's report
// on stdout as it goes.
func runTests(ctx context.Context, app *App, paths []string, opts plugintest.Options, verbose, print bool) *testRun {
	if ctx == nil {
		ctx = context.Background()
	}
	tr := &testRun{}
	for _, path := range paths {
		if len(paths) > 1 && !looksLikeDocument(path) {
			if print {
				fmt.Fprintf(app.Stdout, "skip %s: not a plugin document\n", path)
			}
			tr.Skipped = append(tr.Skipped, path)
			continue
		}
		rep, err := plugintest.RunDir(ctx, path, opts)
		if err != nil {
			if print {
				fmt.Fprintf(app.Stderr, "FAIL %s: %v\n", path, err)
			}
			tr.Docs = append(tr.Docs, testDoc{Path: path, Err: err})
			continue
		}
		renameSingleFile(rep, path)
		if print {
			rep.Write(app.Stdout, verbose)
		}
		tr.Docs = append(tr.Docs, testDoc{Path: path, Rep: rep})
	}
	return tr
}

// looksLikeDocument reports whether path is a folder holding PLUGIN.md or a
// file starting with a front matter line, so that `harness test dir/*`
// passes over READMEs and code beside the documents.
func looksLikeDocument(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return true // let the run report it
	}
	if st.IsDir() {
		_, err := os.Stat(filepath.Join(path, "PLUGIN.md"))
		return err == nil
	}
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	head := make([]byte, 7)
	n, _ := io.ReadFull(f, head)
	h := strings.TrimPrefix(string(head[:n]), "\ufeff")
	return strings.HasPrefix(h, "---\n") || strings.HasPrefix(h, "---\r")
}

// renameSingleFile names a single-file document's positions by the file's
// own name, as lint does (FILE relative to PATH).
func renameSingleFile(rep *plugintest.Report, path string) {
	st, err := os.Stat(path)
	if err != nil || st.IsDir() {
		return
	}
	name := filepath.Base(path)
	if name == fetch.DocumentName {
		return
	}
	for i := range rep.Problems.Items {
		if rep.Problems.Items[i].Pos.File == fetch.DocumentName {
			rep.Problems.Items[i].Pos.File = name
		}
	}
	for i := range rep.Cases {
		if rep.Cases[i].File == fetch.DocumentName {
			rep.Cases[i].File = name
		}
		if rep.Cases[i].Pos.File == fetch.DocumentName {
			rep.Cases[i].Pos.File = name
		}
	}
}
