package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pkuinfo/harness/remote"
)

// checkRemotes reconnects to every remote plugin of the home, as update
// checks every link: at most daily unless force; with check, it reports only.
// The servers are reconnected to a few at once (remote.RefreshAll); the
// reports and warnings come in the order of the ids.
func checkRemotes(ctx context.Context, app *App, dir string, now time.Time, force, check bool) ([]updateReport, error) {
	st := remote.Store{Dir: dir}
	ids, err := st.IDs()
	if err != nil {
		return nil, err
	}
	conn := remoteConn(dir)
	var mu sync.Mutex
	warnings := map[string]string{}
	reps, err := st.RefreshAll(ctx, ids, func(id string, m *remote.Manifest) remote.Conn {
		c, cerr := conn(ctx, m)
		if cerr != nil {
			mu.Lock()
			warnings[id] = fmt.Sprintf("%s: %v", id, cerr)
			mu.Unlock()
		}
		return c
	}, now, force, check)
	for _, id := range ids {
		if w, ok := warnings[id]; ok {
			app.warn(w)
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]updateReport, 0, len(reps))
	for _, rep := range reps {
		r := updateReport{ID: rep.ID, Status: rep.Status, Error: rep.Error, Changes: []string{}}
		for _, c := range rep.Changes {
			r.Changes = append(r.Changes, c.Tool+": "+c.What)
			r.Wider = r.Wider || c.Wider
		}
		r.Applied = rep.Status == "applied" && !check
		out = append(out, r)
	}
	return out, nil
}

// printRemoteUpdates words checkRemotes' reports.
func printRemoteUpdates(app *App, reps []updateReport) {
	for _, r := range reps {
		switch r.Status {
		case "pending":
			fmt.Fprintf(app.Stdout, "%s: its tool list asks for wider access; held: harness accept %s\n", r.ID, r.ID)
		case "applied":
			fmt.Fprintf(app.Stdout, "%s: new tool list applied (same or narrower access)\n", r.ID)
		case "failed":
			fmt.Fprintf(app.Stdout, "%s: reconnect failed, the cached tools keep working: %s\n", r.ID, terminalSafe(r.Error))
		case "skipped":
			fmt.Fprintf(app.Stdout, "%s: checked within the day\n", r.ID)
		default:
			fmt.Fprintf(app.Stdout, "%s: unchanged\n", r.ID)
		}
		for _, c := range r.Changes {
			fmt.Fprintf(app.Stdout, "    %s\n", terminalSafe(c))
		}
	}
}

// acceptRemote applies a remote plugin's pending tool list after showing it.
func acceptRemote(app *App, dir, id string) error {
	st := remote.Store{Dir: dir}
	all, err := st.Load()
	if err != nil {
		return Exit(ExitFailed, err)
	}
	e := all[id]
	if e == nil {
		return Exitf(ExitFailed, "%q is not added", id)
	}
	if e.Pending == nil {
		return Exitf(ExitFailed, "%s: no pending update", id)
	}
	changes, _, err := remote.Diff(e.Manifest, e.Pending)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	writeRemoteSheet(app.Stdout, e.Pending, e.HasToken)
	for _, c := range changes {
		mark := " "
		if c.Wider {
			mark = "+"
		}
		fmt.Fprintf(app.Stdout, "  %s %s: %s\n", mark, c.Tool, c.What)
	}
	if _, err := st.Accept(id, e.Pending.Listed); err != nil {
		return Exit(ExitFailed, err)
	}
	fmt.Fprintf(app.Stdout, "accepted the new tool list of %s (%d tools)\n", id, len(e.Pending.Tools))
	return nil
}
