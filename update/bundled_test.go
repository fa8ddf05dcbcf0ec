package update

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// bundle is a bundled document id at version, following folder id of repo
// on this test's git server.
func bundle(t *testing.T, repo, id, version, front string) Bundle {
	t.Helper()
	files := manifest.Files{}
	for name, text := range plugin("d", id, version, front, map[string]string{"x": "read"}) {
		files[name[len("d/"):]] = []byte(text)
	}
	return Bundle{ID: id, Link: link(repo, "main", id), Ref: "refs/heads/main", Files: files}
}

// checkBundles checks and records the bundles' links at now0, as harness
// update does, and returns the results by id.
func checkBundles(t *testing.T, s *gitServer, st *fetch.Store, bs ...Bundle) map[string]Result {
	t.Helper()
	ctx := context.Background()
	state, err := st.Load()
	require.NoError(t, err)
	var list []Installed
	for _, b := range bs {
		c, err := Current(st, state, b)
		require.NoError(t, err)
		list = append(list, c.Installed())
	}
	res := (&Checker{Now: now0, Force: true, GitBase: s.srv.URL}).Check(ctx, list)
	rec, err := Record(ctx, st, list, res, now0)
	require.NoError(t, err)
	out := map[string]Result{}
	for i, r := range res {
		require.True(t, rec[i], "%s recorded", r.ID)
		out[r.ID] = r
	}
	return out
}

func current(t *testing.T, st *fetch.Store, b Bundle) Copy {
	t.Helper()
	state, err := st.Load()
	require.NoError(t, err)
	c, err := Current(st, state, b)
	require.NoError(t, err)
	return c
}

// An update fetched from a bundled document's link keeps official trust
// only when the link is into the official repository, the rule install
// uses: the same update from another repository is community, in the state
// and in the copy the registry is given.
func TestBundledUpdateTrustFollowsTheLink(t *testing.T) {
	t.Parallel()
	s := newGitServer(t)
	off, other := s.repo(fetch.OfficialOwner+"/"+fetch.OfficialRepo), s.repo("evil/plugins")
	s.commit(off, "main", plugin("o", "o", "1.1.0", "", map[string]string{"x": "read"}))
	s.commit(other, "main", plugin("c", "c", "1.1.0", "", map[string]string{"x": "read"}))
	st, err := fetch.OpenStore(t.TempDir())
	require.NoError(t, err)
	bo := bundle(t, fetch.OfficialOwner+"/"+fetch.OfficialRepo, "o", "1.0.0", "")
	bc := bundle(t, "evil/plugins", "c", "1.0.0", "")
	require.Equal(t, fetch.TrustOfficial, current(t, st, bc).Trust, "the bundled files themselves are official")

	res := checkBundles(t, s, st, bo, bc)
	require.Equal(t, StatusApply, res["o"].Status)
	require.Equal(t, StatusApply, res["c"].Status)
	state, err := st.Load()
	require.NoError(t, err)
	require.Equal(t, fetch.TrustOfficial, state.Bundled["o"].Trust)
	require.Equal(t, fetch.TrustCommunity, state.Bundled["c"].Trust)
	co, cc := current(t, st, bo), current(t, st, bc)
	require.True(t, co.Updated)
	require.True(t, cc.Updated)
	require.Equal(t, "1.1.0", co.Version)
	require.Equal(t, fetch.TrustOfficial, co.Trust)
	require.Equal(t, fetch.TrustCommunity, cc.Trust, "not from the official repository: community")
	require.Empty(t, state.Plugins, "a bundled document's update is not an installed plugin")
}

// The bundled copy is the floor: a link below it is refused and nothing is
// stored; below a stored update but not below the bundled copy it is a
// downgrade held as any installed one's; a newer build's bundled copy takes
// the place of an older stored update (dropped at the next check) and of
// an older pending one (accept refuses it).
func TestBundledCopyIsTheFloor(t *testing.T) {
	t.Parallel()
	s := newGitServer(t)
	repo := s.repo(fetch.OfficialOwner + "/" + fetch.OfficialRepo)
	st, err := fetch.OpenStore(t.TempDir())
	require.NoError(t, err)
	b := bundle(t, fetch.OfficialOwner+"/"+fetch.OfficialRepo, "f", "1.0.0", "")
	push := func(v, front string) {
		s.commit(repo, "main", plugin("f", "f", v, front, map[string]string{"x": "read"}))
	}

	push("0.9.0", "")
	r := checkBundles(t, s, st, b)["f"]
	require.Equal(t, StatusRefused, r.Status)
	require.Contains(t, r.Decision.Warning, "lower than the bundled 1.0.0")
	c := current(t, st, b)
	require.False(t, c.Updated)
	require.Equal(t, "1.0.0", c.VersionInUse())
	require.Contains(t, c.Entry.LastError, "floor")
	require.Empty(t, c.Entry.Hash)
	require.Empty(t, c.Entry.Commit, "a refused link is judged again at the next check")

	push("1.2.0", "")
	require.Equal(t, StatusApply, checkBundles(t, s, st, b)["f"].Status)
	c = current(t, st, b)
	require.True(t, c.Updated)
	require.Equal(t, "1.2.0", c.Version)
	require.Empty(t, c.Entry.LastError)
	require.Equal(t, "1.0.0", c.Entry.LastUpdate().FromVersion)

	push("1.1.0", "")
	r = checkBundles(t, s, st, b)["f"]
	require.Equal(t, StatusHeld, r.Status, "below the update, above the floor: a downgrade, held")
	c = current(t, st, b)
	require.Equal(t, "1.2.0", c.Version)
	require.True(t, c.Entry.Pending.Downgrade)

	// A newer build bundles 1.3.0: the stored 1.2.0 is not used, and the
	// held 1.1.0 cannot be accepted.
	b3 := bundle(t, fetch.OfficialOwner+"/"+fetch.OfficialRepo, "f", "1.3.0", "")
	c = current(t, st, b3)
	require.False(t, c.Updated)
	require.Equal(t, "1.3.0", c.VersionInUse())
	require.Contains(t, c.Obsolete, "the bundled copy 1.3.0 is newer than the stored update 1.2.0")
	_, err = AcceptBundled(context.Background(), st, c, c.Entry.Pending.Hash)
	require.ErrorIs(t, err, ErrBelowFloor)
	stored := c.Entry.Hash
	_, err = st.Files(stored)
	require.NoError(t, err)
	push("1.3.0", "")
	b3.Files = manifest.Files{}
	for name, text := range plugin("d", "f", "1.3.0", "", map[string]string{"x": "read"}) {
		b3.Files[name[len("d/"):]] = []byte(text)
	}
	require.Equal(t, StatusUnchanged, checkBundles(t, s, st, b3)["f"].Status)
	c = current(t, st, b3)
	require.Empty(t, c.Entry.Hash, "the obsolete stored update is dropped")
	require.Nil(t, c.Entry.LastUpdate())
	require.Nil(t, c.Entry.Pending)
	_, err = st.Files(stored)
	require.Error(t, err, "and its files removed")
}

// A wider update of a bundled document waits; AcceptBundled applies the
// one shown, over the copy in use, and refuses when another run changed
// the stored update since the copy was read.
func TestAcceptBundled(t *testing.T) {
	t.Parallel()
	s := newGitServer(t)
	repo := s.repo(fetch.OfficialOwner + "/" + fetch.OfficialRepo)
	st, err := fetch.OpenStore(t.TempDir())
	require.NoError(t, err)
	b := bundle(t, fetch.OfficialOwner+"/"+fetch.OfficialRepo, "w", "1.0.0", "")
	s.commit(repo, "main", plugin("w", "w", "1.1.0", cardFront, map[string]string{"x": "read"}))
	r := checkBundles(t, s, st, b)["w"]
	require.Equal(t, StatusPending, r.Status)
	c := current(t, st, b)
	require.False(t, c.Updated, "wider waits")
	require.NotNil(t, c.Entry.Pending)

	_, err = AcceptBundled(context.Background(), st, c, "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	require.ErrorIs(t, err, ErrPendingChanged, "not the update shown")
	e, err := AcceptBundled(context.Background(), st, c, c.Entry.Pending.Hash)
	require.NoError(t, err)
	require.Equal(t, "1.1.0", e.Version)
	require.Equal(t, fetch.TrustOfficial, e.Trust)
	require.True(t, e.LastUpdate().Accepted)
	require.Equal(t, "1.0.0", e.LastUpdate().FromVersion)
	now := current(t, st, b)
	require.True(t, now.Updated)
	require.Equal(t, "1.1.0", now.Version)
	_, err = AcceptBundled(context.Background(), st, c, "")
	require.ErrorIs(t, err, ErrNoPending)
}

func TestBundledWins(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bundled, stored string
		want            bool
	}{
		{"1.1.0", "1.0.0", true},
		{"1.0.0", "1.0.0", false},
		{"1.0.0", "1.1.0", false},
		{"1.0.0", "weird", false},
		{"1.10.0", "1.9.0", true},
	} {
		require.Equal(t, c.want, BundledWins(c.bundled, c.stored), "%+v", c)
	}
}
