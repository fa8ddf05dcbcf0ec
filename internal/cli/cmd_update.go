package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pkuinfo/harness/fetch"
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
	// Bundled is true for a bundled official document (checked against
	// its link in the official repository).
	Bundled bool `json:"bundled,omitempty"`
	// Sheet is the new version's review sheet, its widening lines marked
	// (apply, pending, held).
	Sheet *review.Sheet `json:"sheet,omitempty"`
}

func newUpdateCmd(app *App) *cobra.Command {
	var check, force, asJSON bool
	cmd := &cobra.Command{
		Use:   "update",
		Short: "Check installed and bundled documents' links for updates; apply same-or-narrower ones",
		Long: `update checks each installed link, and the link of each bundled official
document (its folder in github.com/pkuinfo/pku-harness-plugins), at most once a
day each unless --force (the time of the last check is kept in the state;
HARNESS_NOW overrides the clock). A GitHub link costs one ref listing per
repository, shared by all documents of that repository; a URL document a
conditional request. Only a changed link is fetched, hashed and diffed against
the version in use:

  same or narrower access   applied at once (list shows what changed), also
                            new content under the same version (the content
                            hash is the identity; the record says so)
  wider access              stored and held as pending: harness accept ID
  a lower version           held with a warning: harness accept ID installs
                            it anyway

A bundled document follows the same rules, and its bundled copy is the floor:
a version lower than the bundled copy is refused (nothing is stored), and a
newer build's bundled copy takes the place of an older stored update. An
update of a bundled document is stored in the home, with official trust only
when it comes from the official repository, and harness list shows it. An
installed document of the same id takes the bundled one's place, and only its
own link is checked. HARNESS_BUNDLED_UPDATES=off checks installed links only
(HARNESS_GIT_BASE serves the bundled documents' repository too).

A failure (a link that is gone, a server error, an invalid new version, a
timeout) leaves the version in use working; the error is kept and shown by
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
			installed := len(list)
			if app.Getenv("HARNESS_BUNDLED_UPDATES") != "off" {
				copies, _, err := bundledCopies(st)
				if err != nil {
					return Exit(ExitFailed, err)
				}
				for _, c := range copies {
					in := c.Installed()
					if e := state.Plugins[c.ID]; e != nil && !(e.Trust == fetch.TrustOfficial && update.BundledWins(in.FloorVersion, e.Version)) {
						skipped = append(skipped, updateReport{ID: c.ID, Status: "skipped", Bundled: true, Changes: []string{},
							Warning: "the installed " + c.ID + " takes the bundled document's place; only its own link is checked"})
						continue
					}
					list = append(list, in)
				}
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
				rep.Bundled = i >= installed
				if r.Err != nil && r.Status == update.StatusSkipped {
					rep.Warning = r.Err.Error()
				} else if r.Err != nil {
					rep.Error = r.Err.Error()
				}
				if r.Plugin != nil {
					in := list[i]
					trust := ""
					if e := state.Plugins[r.ID]; e != nil && !rep.Bundled {
						trust = e.Trust
					} else if l, err := fetch.ParseLink(in.Link); err == nil {
						trust = l.Trust() // a bundled document's update: its link's
					}
					rep.Sheet = review.NewSheet(r.Plugin, review.Info{Hash: r.Hash, Trust: trust, Link: in.Link, Commit: r.Commit})
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
				fmt.Fprintf(app.Stdout, "%s: not checked: %s\n", label(r.ID, r.Bundled), r.Warning)
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
	// The bundled documents share one repository: when its listing
	// fails, they fail alike, said once.
	failedAlike := map[string][]string{} // error -> bundled ids
	for i, r := range results {
		if list[i].Bundled && r.Status == update.StatusFailed {
			failedAlike[r.Err.Error()] = append(failedAlike[r.Err.Error()], r.ID)
		}
	}
	for i, r := range results {
		in := list[i]
		if ids := failedAlike[errText(r.Err)]; in.Bundled && r.Status == update.StatusFailed && len(ids) > 1 {
			if ids[0] == r.ID {
				fmt.Fprintf(w, "%s (bundled): check failed, the versions in use keep working: %s\n", strings.Join(ids, ", "), review.SafeText(r.Err.Error()))
			}
			continue
		}
		id, inUse := label(r.ID, in.Bundled), "installed"
		if in.Bundled {
			inUse = "bundled"
			if in.StoredHash != "" && in.StoredHash == in.Hash {
				inUse = "stored update"
			}
		}
		switch r.Status {
		case update.StatusNotDue:
			fmt.Fprintf(w, "%s: not due (last checked %s); --force checks now\n", id, in.LastChecked.UTC().Format(time.RFC3339))
		case update.StatusUnchanged:
			if r.StillPending {
				fmt.Fprintf(w, "%s: unchanged; an update is still pending (harness accept %s)\n", id, r.ID)
			} else {
				fmt.Fprintf(w, "%s: unchanged\n", id)
			}
		case update.StatusApply:
			verb := "updated"
			if check {
				verb = "would update"
			}
			fmt.Fprintf(w, "%s: %s %s → %s (same or narrower access)\n", id, verb, in.Version, r.Version)
			changes(r)
		case update.StatusPending:
			fmt.Fprintf(w, "%s: update %s asks for wider access and waits for your confirmation; the %s %s keeps working\n", id, r.Version, inUse, in.Version)
			changes(r)
			if !check {
				fmt.Fprintf(w, "    harness accept %s applies it\n", r.ID)
			}
		case update.StatusHeld:
			fmt.Fprintf(w, "%s: update held: %s\n", id, review.SafeText(r.Decision.Warning))
			changes(r)
			if !check {
				fmt.Fprintf(w, "    harness accept %s installs it anyway\n", r.ID)
			}
		case update.StatusRefused:
			fmt.Fprintf(w, "%s: update refused: %s; the %s %s keeps working\n", id, review.SafeText(r.Decision.Warning), inUse, in.Version)
		case update.StatusSkipped:
			fmt.Fprintf(w, "%s: %s\n", id, review.SafeText(r.Err.Error()))
		case update.StatusFailed:
			fmt.Fprintf(w, "%s: check failed, the %s version keeps working: %s\n", id, inUse, review.SafeText(r.Err.Error()))
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// label names a document in update's lines: a bundled one says so.
func label(id string, bundled bool) string {
	if bundled {
		return id + " (bundled)"
	}
	return id
}
