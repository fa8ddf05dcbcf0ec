package update

import (
	"context"
	"fmt"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/review"
)

// maxErrorText bounds an error kept in the state.
const maxErrorText = 500

// ChangeLines summarises a delta one line per change: "+ " widens, "- "
// narrows or removes, "  " is neutral; a changed text's line is followed by
// its unified diff, indented by six spaces and cut (review.CutDiff).
func ChangeLines(d review.Delta) []string {
	out := make([]string, 0, len(d.Changes))
	diffLines, cut := 0, false
	for _, c := range d.Changes {
		// The lines are stored and printed later as they are: no control
		// character from a document may reach a terminal through them.
		msg := review.SafeText(c.Message)
		switch {
		case c.Wider:
			out = append(out, "+ "+msg)
		case c.Kind == review.Narrowed || c.Kind == review.Removed:
			out = append(out, "- "+msg)
		default:
			out = append(out, "  "+msg)
		}
		// what changed in a text is shown, cut to a readable size (the
		// lines are safe for a terminal already), and the record as a
		// whole is bounded too
		if len(c.Diff) == 0 {
			continue
		}
		if diffLines >= maxRecordDiffLines {
			if !cut {
				out = append(out, "      … more text changed: harness diff --text OLD NEW shows every diff")
				cut = true
			}
			continue
		}
		for _, l := range review.CutDiff(c.Diff, min(review.MaxDiffLines, maxRecordDiffLines-diffLines)) {
			out = append(out, "      "+l)
			diffLines++
		}
	}
	return out
}

// maxRecordDiffLines bounds the diff lines one record keeps in state.json.
const maxRecordDiffLines = 200

// InstalledFrom describes a state entry for the checker. Quarantined
// entries and local paths are not checked (ok false).
func InstalledFrom(e *fetch.Entry) (Installed, bool) {
	if e == nil || e.Quarantined != "" || e.Kind == fetch.KindLocal {
		return Installed{}, false
	}
	in := Installed{ID: e.ID, Link: e.Link, Hash: e.Hash, Version: e.Version, Commit: e.Commit, Ref: e.Ref,
		ETag: e.ETag, LastModified: e.LastModified, LastChecked: e.LastChecked}
	if p := e.Pending; p != nil {
		in.PendingHash, in.PendingCommit, in.PendingETag, in.PendingLastModified = p.Hash, p.Commit, p.ETag, p.LastModified
	}
	return in, true
}

// LoadFrom reads an installed version from the store, for Checker.Load.
func LoadFrom(st *fetch.Store) func(Installed) (*manifest.Plugin, error) {
	return func(in Installed) (*manifest.Plugin, error) {
		files, err := st.Files(in.Hash)
		if err != nil {
			return nil, err
		}
		p, _ := manifest.Parse(files)
		return p, nil
	}
}

// Record writes check results into the store, under its lock: the time of
// each check; same or narrower versions installed (with a LastUpdate saying
// what changed); wider versions and downgrades stored and held as pending
// (the installed version keeps working); failures kept as the entry's last
// error. Versions no longer referenced are removed. It reports for each
// result whether it was recorded: false for one not checked, for one whose
// entry changed since it was read (removed, reinstalled: another update or
// an install got there first), and for a new version that could not be
// stored; so that nobody is told an update applied that another run decided.
func Record(ctx context.Context, st *fetch.Store, checked []Installed, results []Result, now time.Time) ([]bool, error) {
	recorded := make([]bool, len(results))
	err := st.Update(ctx, func(tx *fetch.Tx) error {
		for i, r := range results {
			if !r.Checked {
				continue
			}
			var e *fetch.Entry
			if checked[i].Bundled {
				if e = bundledEntry(tx.State, checked[i]); e == nil {
					continue
				}
			} else {
				var ok bool
				e, ok = tx.State.Plugins[r.ID]
				if !ok || e.Hash != checked[i].Hash || e.Link != checked[i].Link {
					continue
				}
			}
			recorded[i] = true
			e.LastChecked = now.UTC()
			if r.Status != StatusFailed {
				e.LastError = ""
			}
			switch r.Status {
			case StatusFailed:
				msg := review.SafeText(r.Err.Error())
				if len(msg) > maxErrorText {
					msg = msg[:maxErrorText] + "…"
				}
				e.LastError = msg
			case StatusRefused:
				// The link went back below the floor: what was pending
				// is no longer named by it, and the refusal is kept.
				e.Pending = nil
				e.LastError = review.SafeText(r.Decision.Warning)
			case StatusUnchanged:
				if r.StillPending && e.Pending != nil {
					// The link moved to other commits or validators of
					// the same pending content: follow them.
					if r.Commit != "" {
						e.Pending.Ref, e.Pending.Commit = r.Ref, r.Commit
					}
					if r.ETag != "" || r.LastModified != "" {
						e.Pending.ETag, e.Pending.LastModified = r.ETag, r.LastModified
					}
				}
				if !r.StillPending {
					e.Pending = nil
					if r.Commit != "" {
						e.Commit = r.Commit
						if checked[i].Bundled {
							e.Ref, e.SeenHash = r.Ref, checked[i].Hash
						}
					}
					if r.ETag != "" || r.LastModified != "" {
						e.ETag, e.LastModified = r.ETag, r.LastModified
					}
				}
			case StatusApply:
				h, err := tx.Put(r.Files)
				if err != nil {
					e.LastError = fmt.Sprintf("storing the update: %v", err)
					recorded[i] = false
					continue
				}
				e.SetLastUpdate(&fetch.LastUpdate{FromVersion: checked[i].Version, ToVersion: r.Version, FromHash: checked[i].Hash, ToHash: h,
					At: now.UTC(), Changes: r.Decision.Lines()})
				e.Hash, e.Version, e.Pending = h, r.Version, nil
				if checked[i].Bundled {
					e.SeenHash = h
				}
				if r.Plugin != nil && r.Plugin.Name != "" {
					e.Name = r.Plugin.Name
				}
				if r.Commit != "" {
					e.Ref, e.Commit = r.Ref, r.Commit
				}
				if r.ETag != "" || r.LastModified != "" {
					e.ETag, e.LastModified = r.ETag, r.LastModified
				}
			case StatusPending, StatusHeld:
				h, err := tx.Put(r.Files)
				if err != nil {
					e.LastError = fmt.Sprintf("storing the update: %v", err)
					recorded[i] = false
					continue
				}
				found := now.UTC()
				if e.Pending != nil && e.Pending.Hash == h && !e.Pending.Found.IsZero() {
					found = e.Pending.Found
				}
				p := &fetch.Pending{Hash: h, Version: r.Version, Ref: r.Ref, Commit: r.Commit, ETag: r.ETag, LastModified: r.LastModified,
					Found: found, Wider: r.Decision.Delta.Wider, Downgrade: r.Status == StatusHeld, Changes: r.Decision.Lines()}
				p.SetWarning(r.Decision.Warning)
				e.Pending = p
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recorded, st.Clean(ctx)
}

// bundledEntry is the check state of a bundled document to record into:
// made at its first check; nil when another run changed it since in was
// read (another stored update, another link). A stored update that is no
// longer the copy in use (the bundled copy is newer, or its files cannot be
// read) is dropped: the bundled copy is the floor.
func bundledEntry(state *fetch.State, in Installed) *fetch.Entry {
	e := state.Bundled[in.ID]
	stored := ""
	if e != nil && e.Link == in.Link {
		stored = e.Hash
	}
	if stored != in.StoredHash {
		return nil
	}
	trust := fetch.TrustCommunity
	kind := fetch.KindURL
	if l, err := fetch.ParseLink(in.Link); err == nil {
		trust, kind = l.Trust(), l.Kind
	}
	if e == nil || e.Link != in.Link {
		e = &fetch.Entry{ID: in.ID, Link: in.Link, Kind: kind, Ref: in.Ref, Trust: trust}
		if state.Bundled == nil {
			state.Bundled = map[string]*fetch.Entry{}
		}
		state.Bundled[in.ID] = e
	}
	if e.Hash != "" && e.Hash != in.Hash {
		e.Hash, e.Version, e.Name, e.SeenHash = "", "", "", ""
		e.SetLastUpdate(nil)
	}
	// An update fetched from the link has the link's trust: official only
	// from the official repository.
	e.Trust = trust
	return e
}
