package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/pkuinfo/harness/registry"
	"github.com/spf13/cobra"
)

func init() {
	register(48, newGrantsCmd)
	register(49, newRevokeCmd)
}

func newGrantsCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "grants [ID]",
		Short: "List the standing grants: tools the user allowed always (all plugins', or ID's)",
		Long: `grants lists the standing grants: the tools whose ask the user answered always
(harness run --approve=always, or an MCP client's "always"). Such a tool's later
calls by the agent run without asking while it is the tool the user allowed: the
same document content, trust and effect. A grant never lets a call run in a turn
that read untrusted data, nor the scheduler's, nor a tool whose effect is off, nor
an alwaysAsk, money or community write/public tool. Each row says whether the
grant applies now. harness revoke ID [TOOL] takes grants back; harness remove ID
deletes them with the plugin.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := openRegistry(cmd.Context(), app)
			if err != nil {
				return err
			}
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			list, err := r.Grants(id)
			if err != nil {
				return Exit(ExitFailed, fmt.Errorf("the standing grants cannot be read (none applies): %v", err))
			}
			if asJSON {
				if list == nil {
					list = []registry.GrantState{}
				}
				enc := json.NewEncoder(app.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"grants": list})
			}
			if len(list) == 0 {
				fmt.Fprintln(app.Stdout, "no standing grants")
				return nil
			}
			writeGrants(app, list)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// writeGrants prints grants as a table.
func writeGrants(app *App, list []registry.GrantState) {
	tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tEFFECT\tTRUST\tGRANTED\tAPPLIES")
	for _, g := range list {
		applies := "yes"
		if !g.Applies {
			applies = "no: " + g.Why
		}
		fmt.Fprintf(tw, "%s.%s\t%s\t%s\t%s\t%s\n", g.Plugin, g.Tool, g.Effect, g.Trust, g.Granted.UTC().Format("2006-01-02 15:04"), applies)
	}
	tw.Flush()
}

func newRevokeCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID [TOOL]",
		Short: "Take back standing grants: of one tool, or of every tool of plugin ID",
		Long: `revoke deletes the standing grants of plugin ID's tool TOOL, or of all its tools
without TOOL: their calls by the agent ask again (as the mode says). Exit 1 when
there was nothing to revoke.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return Exitf(ExitUsage, "revoke takes ID, or ID TOOL")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := openRegistry(cmd.Context(), app)
			if err != nil {
				return err
			}
			tool := ""
			if len(args) == 2 {
				tool = args[1]
			}
			n, err := r.Revoke(args[0], tool)
			if err != nil {
				return Exit(ExitFailed, err)
			}
			what := args[0]
			if tool != "" {
				what += "." + tool
			}
			if n == 0 {
				return Exitf(ExitFailed, "%s has no standing grant (harness grants lists them)", terminalSafe(what))
			}
			fmt.Fprintf(app.Stdout, "revoked %d standing grant(s) of %s: the agent's calls ask again\n", n, terminalSafe(what))
			return nil
		},
	}
}
