package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pkuinfo/harness/manifest"
)

// ErrNoPending is returned by Accept when an installed plugin has no
// pending update.
var ErrNoPending = errors.New("no pending update")

// ErrPendingChanged is returned by AcceptPending when the pending update is
// no longer the one the user was shown (a check replaced it meanwhile).
var ErrPendingChanged = errors.New("the pending update changed")

// LastUpdate records the last update applied to an installed plugin, so
// that the user can see what changed (even an update that only rewrote the
// instructions). It is kept in the entry under "lastUpdate".
type LastUpdate struct {
	FromVersion string    `json:"fromVersion,omitempty"`
	ToVersion   string    `json:"toVersion,omitempty"`
	FromHash    string    `json:"fromHash"`
	ToHash      string    `json:"toHash"`
	At          time.Time `json:"at"`
	// Accepted is true when the user accepted it (a wider update or a
	// downgrade); false when it applied by itself (same or narrower).
	Accepted bool `json:"accepted"`
	Wider    bool `json:"wider"`
	// Changes is the diff summary, one line per change ("+" widens,
	// "-" narrows or removes).
	Changes []string `json:"changes"`
}

const (
	lastUpdateKey = "lastUpdate"
	warningKey    = "warning"
)

// LastUpdate returns the record of the last applied update, or nil.
func (e *Entry) LastUpdate() *LastUpdate {
	raw, ok := e.Extra[lastUpdateKey]
	if !ok {
		return nil
	}
	var u LastUpdate
	if json.Unmarshal(raw, &u) != nil {
		return nil
	}
	return &u
}

// SetLastUpdate records the last applied update (nil forgets it).
func (e *Entry) SetLastUpdate(u *LastUpdate) {
	if u == nil {
		delete(e.Extra, lastUpdateKey)
		return
	}
	b, err := json.Marshal(u)
	if err != nil {
		return
	}
	if e.Extra == nil {
		e.Extra = map[string]json.RawMessage{}
	}
	e.Extra[lastUpdateKey] = b
}

// Warning is why a pending update is held (a downgrade), or "".
func (p *Pending) Warning() string {
	var w string
	if raw, ok := p.Extra[warningKey]; ok {
		_ = json.Unmarshal(raw, &w)
	}
	return w
}

// SetWarning records why a pending update is held.
func (p *Pending) SetWarning(w string) {
	if w == "" {
		delete(p.Extra, warningKey)
		return
	}
	b, _ := json.Marshal(w)
	if p.Extra == nil {
		p.Extra = map[string]json.RawMessage{}
	}
	p.Extra[warningKey] = b
}

// Accept applies the pending update of id: its stored files (verified
// against their hash) become the installed version, the link fields move
// over, and the update is recorded as LastUpdate. Files no longer
// referenced are removed. ErrNotInstalled or ErrNoPending when there is
// nothing to accept.
func (s *Store) Accept(ctx context.Context, id string) (*Entry, error) {
	return s.AcceptPending(ctx, id, "")
}

// AcceptPending is Accept of the pending update whose content hash is hash,
// the one whose review sheet the user was shown: when a check replaced it
// since, nothing changes and the error wraps ErrPendingChanged. An empty
// hash accepts whatever is pending.
func (s *Store) AcceptPending(ctx context.Context, id, hash string) (*Entry, error) {
	var out Entry
	err := s.Update(ctx, func(tx *Tx) error {
		e, ok := tx.State.Plugins[id]
		if !ok {
			return fmt.Errorf("%q: %w", id, ErrNotInstalled)
		}
		p := e.Pending
		if p == nil {
			return fmt.Errorf("%q: %w", id, ErrNoPending)
		}
		if hash != "" && p.Hash != hash {
			return fmt.Errorf("%q: %w: %s is pending now, not the reviewed %s", id, ErrPendingChanged, p.Hash, hash)
		}
		files, err := s.Files(p.Hash)
		if err != nil {
			return fmt.Errorf("the pending update of %q cannot be used: %w", id, err)
		}
		if doc, _ := manifest.Parse(files); doc != nil && doc.Name != "" {
			e.Name = doc.Name
		}
		e.SetLastUpdate(&LastUpdate{
			FromVersion: e.Version, ToVersion: p.Version, FromHash: e.Hash, ToHash: p.Hash,
			At: s.Now().UTC(), Accepted: true, Wider: p.Wider, Changes: p.Changes,
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
	return &out, s.Clean(ctx)
}
