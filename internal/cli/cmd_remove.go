package cli

import (
	"context"
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
	"github.com/pkuinfo/harness/update"
	"github.com/spf13/cobra"
)

func init() { register(46, newRemoveCmd) }

func newRemoveCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID",
		Short: "Remove an installed document and its stored data, or a bundled document's stored update",
		Long: `remove forgets the installed document ID, deletes its stored files (and
those of a pending update) and its private data: its KV store, its
preference values and its tools' standing grants, so the next document of
that id starts empty. When a bundled official document of that id comes
back, what it stored itself is kept.

For a bundled official document (built into harness, updated from its
link) that is not installed, remove drops the update stored from its link
and any pending one, so the bundled copy is in use again. Its modes,
preferences, data and grants stay: they are the bundled document's. The
next update check fetches the link again only once it moves past the
commit last seen. The bundled copy itself cannot be removed.

Exit 0 removed; 1 when there is nothing to remove (ID is not installed, or
is a bundled document with no stored or pending update).`,
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
			bundled := slices.Contains(official.Names, id)
			if err := store.Remove(cmd.Context(), id); err != nil {
				if errors.Is(err, fetch.ErrNotInstalled) {
					if bundled {
						return removeBundledUpdate(cmd.Context(), app, store, id)
					}
					return Exitf(ExitFailed, "%q is not installed", id)
				}
				return Exit(ExitFailed, err)
			}
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
			if bundled {
				if c, ok := bundledCopy(store, id); ok && c.Updated {
					msg += fmt.Sprintf("; the bundled official %s is in use again, with the update %s stored from its link (harness remove %s again goes back to the bundled %s)",
						id, c.Version, id, c.FloorVersion())
				}
			}
			fmt.Fprintln(app.Stdout, msg)
			return nil
		},
	}
}

// bundledCopy is the copy in use of the bundled official document id.
func bundledCopy(store *fetch.Store, id string) (update.Copy, bool) {
	copies, _, err := bundledCopies(store)
	if err != nil {
		return update.Copy{}, false
	}
	for _, c := range copies {
		if c.ID == id {
			return c, true
		}
	}
	return update.Copy{}, false
}

// removeBundledUpdate drops the stored and pending updates of the bundled
// official document id (not installed), so its bundled copy is in use again.
func removeBundledUpdate(ctx context.Context, app *App, store *fetch.Store, id string) error {
	copies, _, err := bundledCopies(store)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	var c update.Copy
	for _, b := range copies {
		if b.ID == id {
			c = b
		}
	}
	r, err := update.RevertBundled(ctx, store, c)
	if errors.Is(err, update.ErrNothingStored) {
		return Exitf(ExitFailed, "%s is a bundled official document with no stored or pending update: nothing to remove (the bundled %s is in use; it is built into harness and cannot be removed; harness modes %s EFFECT off turns its tools off)",
			id, c.FloorVersion(), id)
	}
	if err != nil {
		return Exit(ExitFailed, err)
	}
	var dropped []string
	if r.StoredHash != "" {
		dropped = append(dropped, "the update "+r.StoredVersion+" stored from its link")
	}
	if r.PendingHash != "" {
		dropped = append(dropped, "the pending update "+r.PendingVersion)
	}
	fmt.Fprintf(app.Stdout, "removed %s of the bundled official %s; the bundled %s is in use again; kept its modes, preferences and data (they are the bundled document's); the next update check fetches its link only once it moves on\n",
		strings.Join(dropped, " and "), id, c.FloorVersion())
	return nil
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
