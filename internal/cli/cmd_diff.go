package cli

import (
	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/review"
	"github.com/spf13/cobra"
)

func init() { register(35, newDiffCmd) }

func newDiffCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Compare the access two versions of a document declare",
		Long: `diff lists every change between two versions (paths or links), marking the
changes that widen what the document may reach or do: a new campus service, a
broader path prefix, a new or broadened web origin, a new ability, a new tool
that writes, spends money or posts publicly, a stronger effect, a dropped
untrusted, userOnly or alwaysAsk, a new required capability. Access is
compared after normalisation, never as text.

--json prints {"wider": true|false, "changes": [...]}. Exit 0; 1 when a
document cannot be read or is invalid.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var docs [2]*loaded
			for i, arg := range args {
				doc, err := loadDocument(cmd.Context(), app, arg, fetch.TrustCommunity)
				if err != nil {
					return err
				}
				if printDiagnostics(app.Stderr, doc.diags) {
					return Exitf(ExitFailed, "%s is not a valid document", arg)
				}
				docs[i] = doc
			}
			d := review.Diff(docs[0].plugin, docs[1].plugin)
			if asJSON {
				return d.WriteJSON(app.Stdout)
			}
			return d.WriteText(app.Stdout, colourFor(app, app.Stdout))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"wider": ..., "changes": [...]} as JSON`)
	return cmd
}
