package cli

import (
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/fetch"
	"github.com/spf13/cobra"
)

func init() { register(55, newAcceptCmd) }

func newAcceptCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "accept ID",
		Short: "Apply a pending update (wider access or a downgrade)",
		Long: `accept applies the update that harness update held as pending for ID: wider
access, or a downgrade. The pending version's stored files are verified against
their hash first. Exit 0 applied; 1 when nothing is pending for ID.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, err := updateStore(app)
			if err != nil {
				return err
			}
			e, err := st.Accept(cmd.Context(), args[0])
			if errors.Is(err, fetch.ErrNoPending) {
				return Exitf(ExitFailed, "%s: no pending update", args[0])
			}
			if errors.Is(err, fetch.ErrNotInstalled) {
				return Exitf(ExitFailed, "%s is not installed", args[0])
			}
			if err != nil {
				return Exit(ExitFailed, err)
			}
			u := e.LastUpdate()
			if u == nil {
				fmt.Fprintf(app.Stdout, "%s: accepted %s (%s)\n", e.ID, e.Version, e.Hash)
				return nil
			}
			fmt.Fprintf(app.Stdout, "%s: accepted %s → %s (%s)\n", e.ID, orNoVersion(u.FromVersion), orNoVersion(u.ToVersion), u.ToHash)
			for _, c := range u.Changes {
				fmt.Fprintf(app.Stdout, "    %s\n", c)
			}
			return nil
		},
	}
}

func orNoVersion(v string) string {
	if v == "" {
		return "(no version)"
	}
	return v
}
