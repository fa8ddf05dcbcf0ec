package cli

import (
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/review"
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
			// The update's sheet, its widening lines marked, before it
			// applies; and what applies is that update, not another that a
			// check held meanwhile.
			shown := ""
			if sheet := pendingSheet(st, args[0]); sheet != nil {
				if err := sheet.WriteText(app.Stdout, colourFor(app, app.Stdout)); err != nil {
					return Exit(ExitFailed, err)
				}
				fmt.Fprintln(app.Stdout)
				shown = sheet.Hash
			}
			e, err := st.AcceptPending(cmd.Context(), args[0], shown)
			if errors.Is(err, fetch.ErrPendingChanged) {
				return Exitf(ExitFailed, "%s: the pending update changed while its sheet was shown; nothing applied (run accept again to see the new one)", args[0])
			}
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

// pendingSheet is the review sheet of id's pending update, marked against
// the installed version; nil when there is none or it cannot be read.
func pendingSheet(st *fetch.Store, id string) *review.Sheet {
	state, err := st.Load()
	if err != nil {
		return nil
	}
	e, ok := state.Plugins[id]
	if !ok || e.Pending == nil {
		return nil
	}
	newFiles, err := st.Files(e.Pending.Hash)
	if err != nil {
		return nil
	}
	p, _ := manifest.Parse(newFiles)
	var old *manifest.Plugin
	if oldFiles, err := st.Files(e.Hash); err == nil {
		old, _ = manifest.Parse(oldFiles)
	}
	s := review.NewSheet(p, review.Info{Hash: e.Pending.Hash, Trust: e.Trust, Link: e.Link, Commit: e.Pending.Commit})
	s.Mark(review.Diff(old, p), e.Version, e.Hash)
	return s
}

func orNoVersion(v string) string {
	if v == "" {
		return "(no version)"
	}
	return v
}
