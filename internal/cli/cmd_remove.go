package cli

import (
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/fetch"
	"github.com/spf13/cobra"
)

func init() { register(46, newRemoveCmd) }

func newRemoveCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID",
		Short: "Remove an installed document",
		Long: `remove forgets the installed document ID and deletes its stored files (and
those of a pending update). Exit 0 removed; 1 when ID is not installed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := openStore(app)
			if err != nil {
				return err
			}
			if err := store.Remove(cmd.Context(), args[0]); err != nil {
				if errors.Is(err, fetch.ErrNotInstalled) {
					return Exitf(ExitFailed, "%q is not installed", args[0])
				}
				return Exit(ExitFailed, err)
			}
			fmt.Fprintf(app.Stdout, "removed %s\n", args[0])
			return nil
		},
	}
}
