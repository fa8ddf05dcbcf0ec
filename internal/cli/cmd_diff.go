package cli

import (
	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/review"
	"github.com/spf13/cobra"
)

func init() { register(35, newDiffCmd) }

func newDiffCmd(app *App) *cobra.Command {
	var asJSON, text bool
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Compare the access two versions of a document declare",
		Long: `diff lists every change between two versions (paths or links), marking the
changes that widen what the document may reach or do: a new campus service, a
broader path prefix, a new or broadened web origin, a new ability, a new tool
that writes, spends money or posts publicly, a stronger effect, a dropped
untrusted, userOnly or alwaysAsk, a new required capability. Access is
compared after normalisation, never as text.

--text also shows, under each changed text (the instructions, a tool's
description, steps, input or output schema), its unified diff whole, coloured
on a terminal. --json prints {"wider": true|false, "changes": [...]}, each
changed text with its diff lines in "diff". Exit 0; 1 when a document cannot
be read or is invalid.`,
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
			if text {
				return d.WriteTextWithDiffs(app.Stdout, colourFor(app, app.Stdout))
			}
			return d.WriteText(app.Stdout, colourFor(app, app.Stdout))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"wider": ..., "changes": [...]} as JSON`)
	cmd.Flags().BoolVar(&text, "text", false, "show the unified diff of each changed text, whole")
	return cmd
}
