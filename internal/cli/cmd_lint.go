package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/manifest"
	"github.com/spf13/cobra"
)

func init() { register(10, newLintCmd) }

func newLintCmd(app *App) *cobra.Command {
	var asJSON, watching bool
	var trust string
	cmd := &cobra.Command{
		Use:   "lint PATH",
		Short: "Validate a document (a folder or a single PLUGIN.md)",
		Long: `lint validates a plugin document and prints each problem as FILE:LINE:COL: message
(FILE relative to PATH). Exit 0 when valid (warnings may be printed), 1 when invalid.
With --trust official it adds the checks for an official document (a tool returning
text extracted from HTML must be marked untrusted: true); without it, core: true is
warned about (it has no effect on a community document). --watch lints again each
time a file under PATH changes, until interrupted.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			official := false
			switch trust {
			case "community", "":
			case "official":
				official = true
			default:
				return Exit(ExitUsage, fmt.Errorf("--trust must be official or community, not %q", trust))
			}
			if watching {
				return watch(cmd.Context(), app, args, func(context.Context) {
					err := lintOnce(app, args[0], official, asJSON)
					switch {
					case err == nil && !asJSON:
						fmt.Fprintf(app.Stderr, "ok %s\n", terminalSafe(args[0]))
					case err != nil && err.Error() != "":
						fmt.Fprintln(app.Stderr, "harness: "+terminalSafe(err.Error()))
					}
				})
			}
			return lintOnce(app, args[0], official, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the problems as JSON on stdout")
	cmd.Flags().StringVar(&trust, "trust", "community", "the trust the document will have: official adds the official checks")
	cmd.Flags().BoolVar(&watching, "watch", false, "lint again each time a file under PATH changes, until interrupted")
	return cmd
}

// lintOnce lints the document at path and prints its problems.
func lintOnce(app *App, path string, official, asJSON bool) error {
	p, l, err := loadLocal(path)
	if err != nil {
		rl, ok := readProblem(path, err)
		if !ok {
			return Exit(ExitFailed, err)
		}
		l = rl
	} else if official {
		l.Merge(checkOfficial(p))
		l.Sort()
	} else if p.Core {
		l.Warnf(p.KeyPos["core"], "core: true has no effect on a community document: only an official document bundled with the app "+
			"is a core plugin, one that cannot be turned off; a community document can always be turned off")
		l.Sort()
	}
	if asJSON {
		enc := json.NewEncoder(app.Stdout)
		enc.SetIndent("", "  ")
		items := l.Items
		if items == nil {
			items = []diag.Diagnostic{}
		}
		_ = enc.Encode(map[string]any{"valid": !l.HasErrors(), "problems": items})
	} else {
		printDiagnostics(app.Stderr, l)
	}
	if l.HasErrors() {
		return Exit(ExitFailed, nil)
	}
	return nil
}

// readProblem turns a document that cannot be read as a whole (a symbolic
// link, a file over the limit, too many files) into a problem at
// FILE:1:1, FILE relative to PATH, as every other problem is printed. A
// PATH that does not exist is not a document: ok is false.
func readProblem(path string, err error) (diag.List, bool) {
	st, serr := os.Stat(path)
	if serr != nil {
		return diag.List{}, false
	}
	file := fetch.DocumentName
	if !st.IsDir() {
		file = filepath.Base(path)
	}
	var fe *manifest.FileError
	if errors.As(err, &fe) {
		file = fe.File
	}
	var l diag.List
	l.Errorf(diag.Pos{File: file, Line: 1, Col: 1}, "%v", err)
	return l, true
}
