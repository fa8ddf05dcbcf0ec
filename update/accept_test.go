package update

import (
	"context"
	"testing"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// storeFiles is a document's files, as the store keeps them (no folder).
func storeFiles(id, version string) manifest.Files {
	out := manifest.Files{}
	for name, text := range plugin("d", id, version, "", map[string]string{"x": "read"}) {
		out[name[len("d/"):]] = []byte(text)
	}
	return out
}

// installed opens a store in a new home with document a at 1.0.0 installed.
func installed(t *testing.T) *fetch.Store {
	t.Helper()
	st, err := fetch.OpenStore(t.TempDir())
	require.NoError(t, err)
	st.Now = func() time.Time { return now0 }
	files := storeFiles("a", "1.0.0")
	h, err := files.Hash()
	require.NoError(t, err)
	require.NoError(t, st.Install(context.Background(), fetch.Entry{ID: "a", Version: "1.0.0", Hash: h,
		Link: "https://github.com/acme/p/tree/main/a", Kind: fetch.KindGitHub, Ref: "refs/heads/main",
		Commit: "0123456789abcdef0123456789abcdef01234567", Trust: fetch.TrustCommunity, Enabled: true}, files, false))
	return st
}

// TestAcceptPendingReviewed: a check that replaced the pending update after
// the user was shown its sheet does not get the replacement accepted.
func TestAcceptPendingReviewed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := installed(t)
	pend := func(files manifest.Files) string {
		var h string
		require.NoError(t, s.Update(ctx, func(tx *fetch.Tx) error {
			var err error
			h, err = tx.Put(files)
			tx.State.Plugins["a"].Pending = &fetch.Pending{Hash: h, Version: "2.0.0", Wider: true}
			return err
		}))
		return h
	}
	shown := pend(storeFiles("a", "2.0.0"))
	now := pend(storeFiles("a", "2.0.1"))
	_, err := Accept(ctx, s, "a", shown)
	require.ErrorIs(t, err, ErrPendingChanged)
	e, err := s.Get("a")
	require.NoError(t, err)
	require.Equal(t, now, e.Pending.Hash, "nothing changed")
	require.NotEqual(t, now, e.Hash)
	e, err = Accept(ctx, s, "a", now)
	require.NoError(t, err)
	require.Equal(t, now, e.Hash)
	require.Nil(t, e.Pending)
}

// TestAcceptRecordsTheUpdate: the accepted version is installed with the
// pending link fields, the update is recorded as accepted, and the old
// version's files are removed; with nothing pending, or nothing installed,
// Accept says so and changes nothing.
func TestAcceptRecordsTheUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := installed(t)
	_, err := Accept(ctx, s, "a", "")
	require.ErrorIs(t, err, ErrNoPending)
	_, err = Accept(ctx, s, "zz", "")
	require.ErrorIs(t, err, fetch.ErrNotInstalled)

	old, err := s.Get("a")
	require.NoError(t, err)
	var h string
	require.NoError(t, s.Update(ctx, func(tx *fetch.Tx) error {
		h, err = tx.Put(storeFiles("a", "2.0.0"))
		tx.State.Plugins["a"].Pending = &fetch.Pending{Hash: h, Version: "2.0.0", Wider: true,
			Ref: "refs/heads/main", Commit: "89abcdef0123456789abcdef0123456789abcdef", Changes: []string{"+ wider"}}
		return err
	}))
	e, err := Accept(ctx, s, "a", "")
	require.NoError(t, err)
	require.Equal(t, h, e.Hash)
	require.Equal(t, "2.0.0", e.Version)
	require.Equal(t, "89abcdef0123456789abcdef0123456789abcdef", e.Commit)
	u := e.LastUpdate()
	require.NotNil(t, u)
	require.True(t, u.Accepted)
	require.True(t, u.Wider)
	require.Equal(t, "1.0.0", u.FromVersion)
	require.Equal(t, old.Hash, u.FromHash)
	require.Equal(t, []string{"+ wider"}, u.Changes)
	require.Equal(t, now0, u.At)
	_, err = s.Files(old.Hash)
	require.Error(t, err, "the old version's files are gone")
}
