package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pkuinfo/harness/fetch"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/registry"
	"github.com/spf13/cobra"
)

func init() { register(46, newRemoveCmd) }

func newRemoveCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID",
		Short: "Remove an installed document and its stored data",
		Long: `remove forgets the installed document ID, deletes its stored files (and
those of a pending update) and its private data: its KV store and its
preference values, so the next document of that id starts empty. When a
bundled official document of that id comes back, what it stored itself
is kept. Exit 0 removed; 1 when ID is not installed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			store, err := openStore(app)
			if err != nil {
				return err
			}
			if err := store.Remove(cmd.Context(), id); err != nil {
				if errors.Is(err, fetch.ErrNotInstalled) {
					return Exitf(ExitFailed, "%q is not installed", id)
				}
				return Exit(ExitFailed, err)
			}
			bundled := slices.Contains(official.Names, id)
			f, err := registry.ForgetData(store.Dir(), id, bundled)
			if err != nil {
				return Exit(ExitFailed, fmt.Errorf("removed %s, but its stored data could not all be deleted: %w", id, err))
			}
			msg := "removed " + id
			if what := f.What(); len(what) > 0 {
				msg += "; deleted its stored data (" + strings.Join(what, ", ") + ")"
			} else {
				msg += "; it had no stored data"
			}
			if f.KeptOfficial {
				msg += "; kept the data of the bundled official " + id
			}
			fmt.Fprintln(app.Stdout, msg)
			return nil
		},
	}
}
