package cli

import (
	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/review"
	"github.com/spf13/cobra"
)

func init() { register(30, newReviewCmd) }

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
