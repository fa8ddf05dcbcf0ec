package remote

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
)

// Report is what one reconnect found.
type Report struct {
	ID      string   `json:"id"`
	Status  string   `json:"status"` // unchanged, applied, pending, failed, skipped
	Changes []Change `json:"changes,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Refresh reconnects to a remote plugin's server at most once a day (always
// with force), lists its tools again and diffs them with the cached ones, as
// a document update is: the same or narrower applies at once, wider is held
// as Pending until Accept; a failure is recorded and the cached tools keep
// working. conn gives the connection (the token from the keystore). With
// dry, it only reports and writes nothing.
func (s Store) Refresh(ctx context.Context, id string, conn func(*Manifest) Conn, now time.Time, force, dry bool) (Report, error) {
	all, err := s.Load()
	if err != nil {
		return Report{}, err
	}
	e := all[id]
	if e == nil {
		return Report{}, fmt.Errorf("%q is not added", id)
	}
	if !force && !e.Checked.IsZero() && now.Sub(e.Checked) < 24*time.Hour && now.After(e.Checked) {
		return Report{ID: id, Status: "skipped"}, nil
	}
	cur, derr := Discover(ctx, conn(e.Manifest), now)
	rep := Report{ID: id}
	var changes []Change
	var wider bool
	if derr == nil {
		changes, wider, derr = Diff(e.Manifest, cur)
	}
	if dry {
		switch {
		case derr != nil:
			rep.Status, rep.Error = "failed", derr.Error()
		case wider:
			rep.Status, rep.Changes = "pending", changes
		case len(changes) > 0:
			rep.Status, rep.Changes = "applied", changes
		default:
			rep.Status = "unchanged"
		}
		return rep, nil
	}
	err = s.Change(func(all map[string]*Entry) error {
		e := all[id]
		if e == nil {
			return fmt.Errorf("%q was removed meanwhile", id)
		}
		e.Checked = now.UTC()
		switch {
		case derr != nil:
			e.Error = derr.Error()
			rep.Status, rep.Error = "failed", e.Error
		case wider:
			e.Error, e.Pending = "", cur
			rep.Status, rep.Changes = "pending", changes
		case len(changes) > 0:
			e.Error, e.Manifest, e.Pending = "", cur, nil
			rep.Status, rep.Changes = "applied", changes
		default:
			e.Error, e.Pending = "", nil
			rep.Status = "unchanged"
		}
		return nil
	})
	return rep, err
}

// RefreshParallel is how many servers RefreshAll reconnects to at once.
const RefreshParallel = 4

// RefreshAll refreshes the plugins ids, RefreshParallel at once, so that a
// slow or hanging server holds its own reconnect only (each bounded by its
// connection's own timeout), not the others'. The reports are in the order
// of ids; the error is the first, in that order, of a store's failure (a
// server's failure is its report's). conn is called from several
// goroutines at once.
func (s Store) RefreshAll(ctx context.Context, ids []string, conn func(id string, m *Manifest) Conn, now time.Time, force, dry bool) ([]Report, error) {
	reps := make([]Report, len(ids))
	errs := make([]error, len(ids))
	var g errgroup.Group
	g.SetLimit(RefreshParallel)
	for i, id := range ids {
		g.Go(func() error {
			reps[i], errs[i] = s.Refresh(ctx, id, func(m *Manifest) Conn { return conn(id, m) }, now, force, dry)
			return nil
		})
	}
	g.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return reps, nil
}

// Accept applies a remote plugin's pending tool list; shown is the listing
// time of the pending list the user saw, so a newer one that arrived
// meanwhile is not applied unseen.
func (s Store) Accept(id string, shown time.Time) (*Manifest, error) {
	var m *Manifest
	err := s.Change(func(all map[string]*Entry) error {
		e := all[id]
		switch {
		case e == nil:
			return fmt.Errorf("%q is not added", id)
		case e.Pending == nil:
			return fmt.Errorf("%s: no pending update", id)
		case !e.Pending.Listed.Equal(shown):
			return fmt.Errorf("%s: the pending tool list changed while it was shown; nothing applied (run accept again)", id)
		}
		e.Manifest, e.Pending, m = e.Pending, nil, e.Pending
		return nil
	})
	return m, err
}
