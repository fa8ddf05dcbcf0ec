package update

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
)

// ErrNoPending is returned by Accept when an installed plugin has no
// pending update.
var ErrNoPending = errors.New("no pending update")

// ErrPendingChanged is returned by Accept when the pending update is no
// longer the one the user was shown (a check replaced it meanwhile).
var ErrPendingChanged = errors.New("the pending update changed")

// Accept applies the pending update of id whose content hash is hash, the
// one whose review sheet the user was shown: its stored files (verified
// against their hash) become the installed version, the link fields move
// over, and the update is recorded as the entry's LastUpdate. When a check
// replaced the pending update since, nothing changes and the error wraps
// ErrPendingChanged; an empty hash accepts whatever is pending. Files no
// longer referenced are removed. fetch.ErrNotInstalled or ErrNoPending when
// there is nothing to accept.
func Accept(ctx context.Context, st *fetch.Store, id, hash string) (*fetch.Entry, error) {
	var out fetch.Entry
	err := st.Update(ctx, func(tx *fetch.Tx) error {
		e, ok := tx.State.Plugins[id]
		if !ok {
			return fmt.Errorf("%q: %w", id, fetch.ErrNotInstalled)
		}
		if err := acceptPending(st, e, id, hash, e.Version, e.Hash); err != nil {
			return err
		}
		e.Quarantined = ""
		out = *e
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, st.Clean(ctx)
}

// ErrBelowFloor is returned by AcceptBundled when the pending update of a
// bundled document is older than the bundled copy (a newer build came
// since it was found): the bundled copy is the floor.
var ErrBelowFloor = errors.New("older than the bundled copy")

// AcceptBundled applies the pending update of the bundled document c (the
// copy in use, as Current read it) whose content hash is hash, as Accept
// does for an installed one: it becomes the stored update, used in place of
// the bundled copy. Nothing changes when the pending update is not the one
// shown (ErrPendingChanged), when another run changed the stored update
// since c was read (ErrPendingChanged), or when it is older than the
// bundled copy (ErrBelowFloor). ErrNoPending when there is nothing to
// accept.
func AcceptBundled(ctx context.Context, st *fetch.Store, c Copy, hash string) (*fetch.Entry, error) {
	var out fetch.Entry
	err := st.Update(ctx, func(tx *fetch.Tx) error {
		e := tx.State.Bundled[c.ID]
		if e == nil || e.Link != c.Link || e.Pending == nil {
			return fmt.Errorf("%q: %w", c.ID, ErrNoPending)
		}
		if c.Entry == nil || e.Hash != c.Entry.Hash {
			return fmt.Errorf("%q: %w: the stored update changed meanwhile", c.ID, ErrPendingChanged)
		}
		floor := c.FloorVersion()
		if BundledWins(floor, e.Pending.Version) {
			return fmt.Errorf("%q: the pending %s is %w %s", c.ID, e.Pending.Version, ErrBelowFloor, floor)
		}
		if err := acceptPending(st, e, c.ID, hash, c.VersionInUse(), c.Hash); err != nil {
			return err
		}
		e.SeenHash = e.Hash
		if l, err := fetch.ParseLink(e.Link); err == nil {
			e.Trust = l.Trust()
		}
		out = *e
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, st.Clean(ctx)
}

// acceptPending makes e's pending update (of content hash hash; "" for any)
// its version, recorded as accepted over fromVersion and fromHash.
func acceptPending(st *fetch.Store, e *fetch.Entry, id, hash, fromVersion, fromHash string) error {
	p := e.Pending
	if p == nil {
		return fmt.Errorf("%q: %w", id, ErrNoPending)
	}
	if hash != "" && p.Hash != hash {
		return fmt.Errorf("%q: %w: %s is pending now, not the reviewed %s", id, ErrPendingChanged, p.Hash, hash)
	}
	files, err := st.Files(p.Hash)
	if err != nil {
		return fmt.Errorf("the pending update of %q cannot be used: %w", id, err)
	}
	if doc, _ := manifest.Parse(files); doc != nil && doc.Name != "" {
		e.Name = doc.Name
	}
	e.SetLastUpdate(&fetch.LastUpdate{
		FromVersion: fromVersion, ToVersion: p.Version, FromHash: fromHash, ToHash: p.Hash,
		At: st.Now().UTC(), Accepted: true, Wider: p.Wider, Changes: p.Changes,
	})
	e.Hash, e.Version = p.Hash, p.Version
	if p.Commit != "" {
		e.Ref, e.Commit = p.Ref, p.Commit
	}
	if p.ETag != "" || p.LastModified != "" {
		e.ETag, e.LastModified = p.ETag, p.LastModified
	}
	e.Pending = nil
	return nil
}
