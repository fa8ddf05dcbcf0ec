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
			FromVersion: e.Version, ToVersion: p.Version, FromHash: e.Hash, ToHash: p.Hash,
			At: st.Now().UTC(), Accepted: true, Wider: p.Wider, Changes: p.Changes,
		})
		e.Hash, e.Version = p.Hash, p.Version
		if p.Commit != "" {
			e.Ref, e.Commit = p.Ref, p.Commit
		}
		if p.ETag != "" || p.LastModified != "" {
			e.ETag, e.LastModified = p.ETag, p.LastModified
		}
		e.Pending, e.Quarantined = nil, ""
		out = *e
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, st.Clean(ctx)
}
