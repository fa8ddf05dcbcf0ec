package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/remote"
	"github.com/pkuinfo/harness/review"
	"github.com/pkuinfo/harness/update"
	"github.com/spf13/cobra"
)

func init() { register(55, newAcceptCmd) }

func newAcceptCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "accept ID",
		Short: "Apply a pending update (wider access or a downgrade)",
		Long: `accept applies the update that harness update held as pending for ID: wider
access, or a downgrade. The pending version's stored files are verified against
their hash first. For a bundled official document, it applies the update its
link offered over the copy in use (never one older than the bundled copy).
Exit 0 applied; 1 when nothing is pending for ID.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, err := updateStore(app)
			if err != nil {
				return err
			}
			if strings.HasPrefix(args[0], remote.Prefix) {
				return acceptRemote(app, st.Dir(), args[0])
			}
			if _, err := st.Get(args[0]); errors.Is(err, fetch.ErrNotInstalled) && slices.Contains(official.Names, args[0]) {
				return acceptBundled(cmd.Context(), app, st, args[0])
			}
			// The update's sheet, its widening lines marked, before it
			// applies; and what applies is that update, not another that a
			// check held meanwhile.
			shown := ""
			sheet, doc, trust := pendingSheet(st, args[0])
			if doc != nil {
				// What install refuses, accept refuses: an invalid version
				// (kept from an engine that checked less), or one whose id
				// or legacy ids another document holds (it would push that
				// one out).
				if _, dl := checkFiles(doc.Files); dl.HasErrors() {
					printDiagnostics(app.Stderr, dl)
					return Exitf(ExitFailed, "%s: the pending update is invalid; nothing applied", args[0])
				}
				bundled, err := bundledDocuments(st)
				if err != nil {
					return Exit(ExitFailed, err)
				}
				if err := registry.CheckInstall(cmd.Context(), st, bundled, doc, registry.Trust(trust)); err != nil {
					return Exitf(ExitFailed, "%s: the pending update cannot be applied: %v; nothing applied", args[0], err)
				}
			}
			if sheet != nil {
				if err := sheet.WriteText(app.Stdout, colourFor(app, app.Stdout)); err != nil {
					return Exit(ExitFailed, err)
				}
				fmt.Fprintln(app.Stdout)
				shown = sheet.Hash
			}
			if sheet == nil {
				// Nothing was shown, so nothing may apply: not an update
				// another run holds from now on, nor one whose files
				// cannot be read. No content hash is this value.
				shown = "none"
			}
			e, err := update.Accept(cmd.Context(), st, args[0], shown)
			if errors.Is(err, update.ErrPendingChanged) && sheet == nil {
				why := "it arrived while accept looked for it"
				if e, gerr := st.Get(args[0]); gerr == nil && e.Pending != nil {
					if _, ferr := st.Files(e.Pending.Hash); ferr != nil {
						why = ferr.Error()
					}
				}
				return Exitf(ExitFailed, "%s: the pending update could not be read to show its sheet (%s); nothing applied", args[0], why)
			}
			if errors.Is(err, update.ErrPendingChanged) {
				return Exitf(ExitFailed, "%s: the pending update changed while its sheet was shown; nothing applied (run accept again to see the new one)", args[0])
			}
			if errors.Is(err, update.ErrNoPending) {
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

// pendingSheet is the review sheet of id's pending update, marked against
// the installed version, with the update's document and the entry's trust;
// nil when there is none or it cannot be read.
func pendingSheet(st *fetch.Store, id string) (*review.Sheet, *manifest.Plugin, string) {
	state, err := st.Load()
	if err != nil {
		return nil, nil, ""
	}
	e, ok := state.Plugins[id]
	if !ok || e.Pending == nil {
		return nil, nil, ""
	}
	newFiles, err := st.Files(e.Pending.Hash)
	if err != nil {
		return nil, nil, ""
	}
	p, _ := manifest.Parse(newFiles)
	var old *manifest.Plugin
	if oldFiles, err := st.Files(e.Hash); err == nil {
		old, _ = manifest.Parse(oldFiles)
	}
	s := review.NewSheet(p, review.Info{Hash: e.Pending.Hash, Trust: e.Trust, Link: e.Link, Commit: e.Pending.Commit})
	s.Mark(review.Diff(old, p), e.Version, e.Hash)
	return s, p, e.Trust
}

func orNoVersion(v string) string {
	if v == "" {
		return "(no version)"
	}
	return v
}

// acceptBundled applies the pending update of a bundled official document
// (one its link offers with wider access, or a downgrade not below the
// bundled copy) after its sheet, marked against the copy in use.
func acceptBundled(ctx context.Context, app *App, st *fetch.Store, id string) error {
	copies, _, err := bundledCopies(st)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	i := slices.IndexFunc(copies, func(c update.Copy) bool { return c.ID == id })
	c := copies[i]
	if c.Entry == nil || c.Entry.Pending == nil {
		return Exitf(ExitFailed, "%s: no pending update", id)
	}
	pd := c.Entry.Pending
	files, err := st.Files(pd.Hash)
	if err != nil {
		return Exitf(ExitFailed, "%s: the pending update could not be read to show its sheet (%v); nothing applied", id, err)
	}
	doc, dl := checkFiles(files)
	if dl.HasErrors() {
		printDiagnostics(app.Stderr, dl)
		return Exitf(ExitFailed, "%s: the pending update is invalid; nothing applied", id)
	}
	trust := fetch.TrustCommunity
	if l, err := fetch.ParseLink(c.Link); err == nil {
		trust = l.Trust()
	}
	bundled, err := bundledDocuments(st)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	if err := registry.CheckInstall(ctx, st, bundled, doc, registry.Trust(trust)); err != nil {
		return Exitf(ExitFailed, "%s: the pending update cannot be applied: %v; nothing applied", id, err)
	}
	cur, _ := manifest.Parse(c.Files)
	sheet := review.NewSheet(doc, review.Info{Hash: pd.Hash, Trust: trust, Link: c.Link, Commit: pd.Commit})
	sheet.Mark(review.Diff(cur, doc), c.VersionInUse(), c.Hash)
	if err := sheet.WriteText(app.Stdout, colourFor(app, app.Stdout)); err != nil {
		return Exit(ExitFailed, err)
	}
	fmt.Fprintln(app.Stdout)
	e, err := update.AcceptBundled(ctx, st, c, pd.Hash)
	switch {
	case errors.Is(err, update.ErrBelowFloor):
		return Exitf(ExitFailed, "%s: refused: %v; the bundled copy is the floor, nothing applied", id, err)
	case errors.Is(err, update.ErrPendingChanged):
		return Exitf(ExitFailed, "%s: the pending update changed while its sheet was shown; nothing applied (run accept again to see the new one)", id)
	case errors.Is(err, update.ErrNoPending):
		return Exitf(ExitFailed, "%s: no pending update", id)
	case err != nil:
		return Exit(ExitFailed, err)
	}
	u := e.LastUpdate()
	fmt.Fprintf(app.Stdout, "%s (bundled): accepted %s → %s (%s, %s)\n", id, orNoVersion(u.FromVersion), orNoVersion(u.ToVersion), u.ToHash, e.Trust)
	for _, l := range u.Changes {
		fmt.Fprintf(app.Stdout, "    %s\n", l)
	}
	return nil
}
