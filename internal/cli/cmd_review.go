package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/review"
	"github.com/spf13/cobra"
)

func init() { register(30, newReviewCmd) }

// loaded is a document read from a path or a link, with what the engine
// knows about it.
type loaded struct {
	plugin *manifest.Plugin
	info   review.Info
	diags  diag.List
}

// loadDocument reads a local path or fetches a link, parses and checks the
// document. trust applies to a local path; a link's trust comes from the link.
func loadDocument(ctx context.Context, app *App, arg, trust string) (*loaded, error) {
	l, err := fetch.ParseLink(arg)
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	if l.Kind == fetch.KindLocal {
		p, dl, err := loadLocal(arg)
		if err != nil {
			return nil, Exit(ExitFailed, err)
		}
		h, err := p.Files.Hash()
		if err != nil {
			return nil, Exit(ExitFailed, err)
		}
		return &loaded{plugin: p, diags: dl, info: review.Info{Hash: h, Trust: trust}}, nil
	}
	doc, err := fetchDocument(ctx, app, l)
	if err != nil {
		// A server's words reach the terminal only made safe.
		return nil, Exit(ExitFailed, errors.New(review.SafeText(err.Error())))
	}
	p, dl := checkFiles(doc.Files)
	h, err := p.Files.Hash()
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	return &loaded{plugin: p, diags: dl, info: review.Info{Hash: h, Trust: l.Trust(), Link: l.String(), Commit: doc.Commit}}, nil
}

// diagLine keeps a diagnostic on one line.
var diagLine = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ")

// printDiagnostics writes lint's lines on w; it reports whether there were errors.
func printDiagnostics(w io.Writer, l diag.List) bool {
	for _, d := range l.Items {
		// One line each, with nothing a terminal would obey: a message may
		// quote the document (a selector holding an escape sequence).
		fmt.Fprintln(w, diagLine.Replace(terminalSafe(d.String())))
	}
	if l.Dropped > 0 {
		fmt.Fprintf(w, "%d more problems were not shown\n", l.Dropped)
	}
	return l.HasErrors()
}

// colourFor reports whether to colour output on w: a terminal, and NO_COLOR unset.
func colourFor(app *App, w io.Writer) bool {
	return isTerminal(w) && app.Getenv("NO_COLOR") == "" && app.Getenv("TERM") != "dumb"
}

func newReviewCmd(app *App) *cobra.Command {
	var asJSON bool
	var trust string
	cmd := &cobra.Command{
		Use:   "review PATH|LINK",
		Short: "Show what a document declares: access, tools and their effects",
		Long: `review prints the review sheet of a document: id, name, version, content hash,
trust, the capabilities it requires, the campus services and path prefixes it
may reach (and what each service is), its public web origins, its host
abilities and each tool with its effect and flags.

PATH is a folder or a PLUGIN.md; LINK is a GitHub folder or blob link or a
PLUGIN.md URL. Exit 0, or 1 when the document is invalid (each problem on
stderr as FILE:LINE:COL: message).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if trust != fetch.TrustOfficial && trust != fetch.TrustCommunity {
				return Exitf(ExitUsage, "--trust %q: expected official or community", trust)
			}
			doc, err := loadDocument(cmd.Context(), app, args[0], trust)
			if err != nil {
				return err
			}
			if printDiagnostics(app.Stderr, doc.diags) {
				return Exit(ExitFailed, nil)
			}
			s := review.NewSheet(doc.plugin, doc.info)
			if asJSON {
				return s.WriteJSON(app.Stdout)
			}
			return s.WriteText(app.Stdout, colourFor(app, app.Stdout))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sheet as JSON")
	cmd.Flags().StringVar(&trust, "trust", fetch.TrustCommunity, "trust for a local path: official or community")
	return cmd
}
