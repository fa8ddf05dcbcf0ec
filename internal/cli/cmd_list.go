package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func init() { register(45, newListCmd) }

func newListCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List installed documents: trust, hash, pending updates, problems",
		Long: `list prints the installed documents with their version, trust, content hash and
link, and any pending update, last update error or quarantine. Stored files are
verified against their hash; a plugin whose files changed is quarantined (and
shown so) while the others keep working. --json prints an array of the state
entries, each with "problem" when it cannot be used.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := openStore(app)
			if err != nil {
				return err
			}
			list, err := store.LoadInstalled(cmd.Context())
			if err != nil {
				return Exit(ExitFailed, err)
			}
			if asJSON {
				out := make([]map[string]any, 0, len(list))
				for _, in := range list {
					b, err := json.Marshal(in.Entry)
					if err != nil {
						return Exit(ExitFailed, err)
					}
					m := map[string]any{}
					if err := json.Unmarshal(b, &m); err != nil {
						return Exit(ExitFailed, err)
					}
					if in.Err != nil {
						m["problem"] = in.Err.Error()
					}
					out = append(out, m)
				}
				enc := json.NewEncoder(app.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			if len(list) == 0 {
				fmt.Fprintln(app.Stdout, "no documents installed")
				return nil
			}
			tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tVERSION\tTRUST\tHASH\tLINK")
			for _, in := range list {
				e := in.Entry
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.ID, orDash(e.Version), e.Trust, e.Hash, e.Link)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, in := range list {
				e := in.Entry
				if in.Err != nil {
					fmt.Fprintf(app.Stdout, "%s: %v\n", e.ID, in.Err)
				}
				if !e.Enabled {
					fmt.Fprintf(app.Stdout, "%s: disabled\n", e.ID)
				}
				if pd := e.Pending; pd != nil {
					kind := "update"
					if pd.Wider {
						kind = "update asking for wider access"
					}
					if pd.Downgrade {
						kind += " (downgrade)"
					}
					fmt.Fprintf(app.Stdout, "%s: pending %s %s (%s); harness accept %s applies it\n", e.ID, kind, orDash(pd.Version), pd.Hash, e.ID)
					if w := pd.Warning(); w != "" {
						fmt.Fprintf(app.Stdout, "    warning: %s\n", terminalSafe(w))
					}
					for _, c := range pd.Changes {
						fmt.Fprintf(app.Stdout, "    %s\n", terminalSafe(c))
					}
				}
				if u := e.LastUpdate(); u != nil {
					how := "applied by itself (same or narrower access)"
					if u.Accepted {
						how = "accepted"
					}
					fmt.Fprintf(app.Stdout, "%s: last update %s -> %s on %s, %s\n", e.ID, orDash(u.FromVersion), orDash(u.ToVersion), u.At.UTC().Format("2006-01-02 15:04"), how)
					for _, c := range u.Changes {
						fmt.Fprintf(app.Stdout, "    %s\n", terminalSafe(c))
					}
				}
				if e.LastError != "" {
					fmt.Fprintf(app.Stdout, "%s: last update failed: %s\n", e.ID, terminalSafe(e.LastError))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
