package update

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/fetch"
)

// ErrNothingStored is returned by RevertBundled when a bundled document has
// neither a stored nor a pending update: its bundled copy is in use, and
// there is nothing to drop.
var ErrNothingStored = errors.New("no stored or pending update")

// Reverted says what RevertBundled dropped.
type Reverted struct {
	// StoredVersion and StoredHash are the stored update that was in place
	// of the bundled copy (or that a newer bundled copy had made obsolete);
	// "" when there was none.
	StoredVersion, StoredHash string
	// PendingVersion and PendingHash are the pending update that was
	// dropped; "" when there was none.
	PendingVersion, PendingHash string
}

// RevertBundled drops the stored update and the pending update of the
// bundled document c (as Current read it), so that its bundled copy is in
// use again: harness remove of a bundled id. The commit (or validators) of
// the link last seen, the pending update's when there was one, is kept as
// seen with the bundled copy in use, so the next check does not fetch and
// apply the same update again: only a link that moves on is fetched and
// judged against the bundled copy, as usual. The bundled document's
// settings, preferences, data and grants are not touched: they are the
// bundled document's, which stays. Store folders no longer referenced are
// removed. ErrNothingStored when there is nothing to drop.
func RevertBundled(ctx context.Context, st *fetch.Store, c Copy) (Reverted, error) {
	var r Reverted
	err := st.Update(ctx, func(tx *fetch.Tx) error {
		e := tx.State.Bundled[c.ID]
		if e == nil || e.Hash == "" && e.Pending == nil {
			return fmt.Errorf("%q: %w", c.ID, ErrNothingStored)
		}
		if e.Hash != "" {
			r.StoredVersion, r.StoredHash = e.Version, e.Hash
		}
		if p := e.Pending; p != nil {
			r.PendingVersion, r.PendingHash = p.Version, p.Hash
		}
		if e.Link != c.Link {
			// Kept for another link (a build that moved the document):
			// Current does not use it, and its check starts again.
			delete(tx.State.Bundled, c.ID)
			return nil
		}
		if p := e.Pending; p != nil {
			if p.Commit != "" {
				e.Ref, e.Commit = p.Ref, p.Commit
			}
			if p.ETag != "" || p.LastModified != "" {
				e.ETag, e.LastModified = p.ETag, p.LastModified
			}
		}
		e.Hash, e.Version, e.Name, e.Pending = "", "", "", nil
		e.SetLastUpdate(nil)
		// The commit stands for the bundled copy now (Entry.SeenHash).
		e.SeenHash = c.BundledHash
		if e.Commit == "" {
			e.SeenHash = ""
		}
		return nil
	})
	if err != nil {
		return Reverted{}, err
	}
	return r, st.Clean(ctx)
}
