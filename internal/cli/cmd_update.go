package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/pkuinfo/harness/review"
	"github.com/pkuinfo/harness/update"
	"github.com/spf13/cobra"
)

func init() { register(50, newUpdateCmd) }

// updateReport is one line of `harness update --json`.
type updateReport struct {
	ID      string   `json:"id"`
	Status  string   `json:"status"`
	Applied bool     `json:"applied"`
	Version string   `json:"version,omitempty"`
	Hash    string   `json:"hash,omitempty"`
	Wider   bool     `json:"wider"`
	Warning string   `json:"warning,omitempty"`
	Error   string   `json:"error,omitempty"`
	Changes []string `json:"changes"`
	// Sheet is the new version's review sheet, its widening lines marked
	// (apply, pending, held).
	Sheet *review.Sheet `json:"sheet,omitempty"`
}

func newUpdateCmd(app *App) *cobra.Command {
	var check, force, asJSON bool
	cmd := &cobra.Command{
		Use:   "update",
		Short: "Check installed links for updates; apply same-or-narrower ones",
		Long: `update checks each installed link, at most once a day unless --force (the time
of the last check is kept in the state; HARNESS_NOW overrides the clock). A
GitHub link costs one ref listing per repository, shared by all documents of
that repository; a URL document a conditional request. Only a changed link is
fetched, hashed and diffed against the installed version:

  same or narrower access   applied at once (list shows what changed), also
                            new content under the same version (the content
                            hash is the identity; the record says so)
  wider access              stored and held as pending: harness accept ID
  a lower version           held with a warning: harness accept ID installs
                            it anyway

A failure (a link that is gone, a server error, an invalid new version, a
timeout) leaves the installed version working; the error is kept and shown by
harness list. --check only reports and changes nothing. Exit 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, now, err := updateStore(app)
			if err != nil {
				return err
			}
			state, err := st.Load()
			if err != nil {
				return Exit(ExitFailed, err)
			}
			var list []update.Installed
			var skipped []updateReport
			for _, id := range slices.Sorted(maps.Keys(state.Plugins)) {
				e := state.Plugins[id]
				if in, ok := update.InstalledFrom(e); ok {
					list = append(list, in)
					continue
				}
				why := "installed from a local path: install it again to update it"
				if e.Quarantined != "" {
					why = "quarantined: install it again"
				}
				skipped = append(skipped, updateReport{ID: id, Status: "skipped", Warning: why, Changes: []string{}})
			}
			c := &update.Checker{Now: now, Force: force, GitBase: app.Getenv("HARNESS_GIT_BASE"), Load: update.LoadFrom(st),
				Validate: documentCheck}
			results := c.Check(ctx, list)
			if !check {
				recorded, err := update.Record(ctx, st, list, results, now)
				if err != nil {
					return Exit(ExitFailed, err)
				}
				for i, r := range results {
					if r.Checked && !recorded[i] {
						// Another run (or an install) changed the entry
						// first: what it decided stands, not this one.
						results[i] = update.Result{ID: r.ID, Status: update.StatusSkipped,
							Err: errors.New("the entry changed while it was checked (another update or install ran); nothing recorded: harness list shows what is installed")}
					}
				}
			}
			reports := make([]updateReport, len(results))
			for i, r := range results {
				rep := updateReport{ID: r.ID, Status: string(r.Status), Version: r.Version, Hash: r.Hash,
					Wider: r.Decision.Delta.Wider, Warning: r.Decision.Warning, Changes: r.Decision.Lines()}
				rep.Applied = r.Status == update.StatusApply && !check
				if r.Err != nil && r.Status == update.StatusSkipped {
					rep.Warning = r.Err.Error()
				} else if r.Err != nil {
					rep.Error = r.Err.Error()
				}
				if r.Plugin != nil {
					in := list[i]
					rep.Sheet = review.NewSheet(r.Plugin, review.Info{Hash: r.Hash, Trust: state.Plugins[r.ID].Trust, Link: in.Link, Commit: r.Commit})
					rep.Sheet.Mark(r.Decision.Delta, in.Version, in.Hash)
				}
				reports[i] = rep
			}
			reports = append(reports, skipped...)
			remotes, err := checkRemotes(ctx, app, st.Dir(), now, force, check)
			if err != nil {
				return Exit(ExitFailed, err)
			}
			reports = append(reports, remotes...)
			if asJSON {
				enc := json.NewEncoder(app.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(reports)
			}
			printUpdates(app, list, results, check)
			for _, r := range skipped {
				fmt.Fprintf(app.Stdout, "%s: not checked: %s\n", r.ID, r.Warning)
			}
			printRemoteUpdates(app, remotes)
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "only report; change nothing")
	cmd.Flags().BoolVar(&force, "force", false, "check every link even when checked within the day")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func printUpdates(app *App, list []update.Installed, results []update.Result, check bool) {
	w := app.Stdout
	if len(results) == 0 {
		fmt.Fprintln(w, "no installed links to check")
		return
	}
	changes := func(r update.Result) {
		for _, l := range r.Decision.Lines() {
			fmt.Fprintf(w, "    %s\n", review.SafeText(l))
		}
	}
	for i, r := range results {
		in := list[i]
		switch r.Status {
		case update.StatusNotDue:
			fmt.Fprintf(w, "%s: not due (last checked %s); --force checks now\n", r.ID, in.LastChecked.UTC().Format(time.RFC3339))
		case update.StatusUnchanged:
			if r.StillPending {
				fmt.Fprintf(w, "%s: unchanged; an update is still pending (harness accept %s)\n", r.ID, r.ID)
			} else {
				fmt.Fprintf(w, "%s: unchanged\n", r.ID)
			}
		case update.StatusApply:
			verb := "updated"
			if check {
				verb = "would update"
			}
			fmt.Fprintf(w, "%s: %s %s → %s (same or narrower access)\n", r.ID, verb, in.Version, r.Version)
			changes(r)
		case update.StatusPending:
			fmt.Fprintf(w, "%s: update %s asks for wider access and waits for your confirmation; the installed %s keeps working\n", r.ID, r.Version, in.Version)
			changes(r)
			if !check {
				fmt.Fprintf(w, "    harness accept %s applies it\n", r.ID)
			}
		case update.StatusHeld:
			fmt.Fprintf(w, "%s: update held: %s\n", r.ID, review.SafeText(r.Decision.Warning))
			changes(r)
			if !check {
				fmt.Fprintf(w, "    harness accept %s installs it anyway\n", r.ID)
			}
		case update.StatusSkipped:
			fmt.Fprintf(w, "%s: %s\n", r.ID, review.SafeText(r.Err.Error()))
		case update.StatusFailed:
			fmt.Fprintf(w, "%s: check failed, the installed version keeps working: %s\n", r.ID, review.SafeText(r.Err.Error()))
		}
	}
}
