package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pkuinfo/harness/fetch"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/remote"
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
			if strings.HasPrefix(id, remote.Prefix) {
				return removeRemote(app, store.Dir(), id)
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

// removeRemote forgets a remote plugin and deletes its token.
func removeRemote(app *App, dir, id string) error {
	var had *remote.Entry
	err := remote.Store{Dir: dir}.Change(func(all map[string]*remote.Entry) error {
		had = all[id]
		if had == nil {
			return fmt.Errorf("%q is not added", id)
		}
		delete(all, id)
		return nil
	})
	if err != nil {
		return Exit(ExitFailed, err)
	}
	what := ""
	if path := filepath.Join(dir, "keystore.json"); had.HasToken || fileExists(path) {
		ks, err := proxy.OpenKeystore(path)
		if err != nil {
			return Exit(ExitFailed, err)
		}
		if _, ok := ks.Get(id); ok {
			if err := ks.Delete(id); err != nil {
				return Exit(ExitFailed, err)
			}
			what = "; deleted its token from the keystore"
		}
	}
	if f, err := registry.ForgetData(dir, id, false); err == nil && len(f.What()) > 0 {
		what += "; deleted its stored data (" + strings.Join(f.What(), ", ") + ")"
	}
	fmt.Fprintf(app.Stdout, "removed %s (remote plugin at %s%s)\n", id, had.Manifest.URL, what)
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
