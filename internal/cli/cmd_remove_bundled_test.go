package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// canteenServices is a services file mapping the canteen service to a
// loopback server that counts its requests and lists no canteen, so the
// bundled crowd tool runs for real without leaving loopback.
func canteenServices(t *testing.T) (path string, hits *atomic.Int64) {
	t.Helper()
	hits = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"canteens": []}`))
	}))
	t.Cleanup(srv.Close)
	path = filepath.Join(t.TempDir(), "services.yaml")
	require.NoError(t, os.WriteFile(path, []byte("canteen:\n  origin: "+srv.URL+"\n"), 0o600))
	return path, hits
}

// harness remove of a bundled official id drops the update stored from
// its link, so the bundled copy is in use again, keeps the bundled
// document's data, and is not undone by the next check of the same
// commit; a second remove says there is nothing to remove (exit 1).
func TestRemoveBundledStoredUpdate(t *testing.T) {
	r := newBundledRepo(t)
	home := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	services, hits := canteenServices(t)

	// Nothing stored yet: nothing to remove, said so, exit 1.
	code, out, errs := runCLI(t, r.env(home, t0), "remove", "canteen")
	require.Equal(t, 1, code, out)
	assert.Empty(t, out)
	assert.Contains(t, errs, "canteen is a bundled official document with no stored or pending update: nothing to remove")
	assert.Contains(t, errs, "the bundled 1.0.0 is in use")

	r.push("canteen", "PLUGIN.md", canteenV("1.1.0"))
	r.push("canteen", "tools/crowd.yaml", crowdReturns("update"))
	code, out, errs = runCLI(t, r.env(home, t0), "update")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "canteen (bundled): updated 1.0.0 → 1.1.0")
	stored := loadState(t, home).Bundled["canteen"]
	require.NotEmpty(t, stored.Hash)
	code, out, errs = runCLI(t, r.env(home, t0), "run", "canteen", "crowd", "--services", services)
	require.Equal(t, 0, code, errs)
	require.JSONEq(t, `{"served":"update"}`, out)
	require.Zero(t, hits.Load())

	// The bundled document's own data, which remove must keep.
	kv := filepath.Join(home, "kv", "canteen.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(kv), 0o700))
	require.NoError(t, os.WriteFile(kv, []byte(`{"seen":1}`), 0o600))

	code, out, errs = runCLI(t, r.env(home, t0), "remove", "canteen")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "removed the update 1.1.0 stored from its link of the bundled official canteen; the bundled 1.0.0 is in use again; "+
		"kept its modes, preferences and data (they are the bundled document's); the next update check fetches its link only once it moves on\n", out)
	e := loadState(t, home).Bundled["canteen"]
	require.NotNil(t, e, "the check state stays")
	assert.Empty(t, e.Hash)
	assert.Empty(t, e.Version)
	assert.Nil(t, e.LastUpdate())
	assert.Equal(t, stored.Commit, e.Commit, "the commit last seen stays seen")
	assert.FileExists(t, kv)
	st, err := fetch.OpenStore(home)
	require.NoError(t, err)
	_, err = st.Files(stored.Hash)
	assert.Error(t, err, "the stored update's files are deleted")

	// The bundled copy runs again: its steps ask the (loopback) service.
	code, out, errs = runCLI(t, r.env(home, t0), "run", "canteen", "crowd", "--services", services)
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, "served")
	assert.EqualValues(t, 1, hits.Load())
	for _, m := range listJSON(t, r.env(home, t0)) {
		assert.NotEqual(t, "canteen", m["id"], "nothing stored or pending: list has nothing to say of it")
	}

	// The next day's check sees the same commit: unchanged, nothing fetched,
	// the update is not applied again.
	r.reset()
	code, out, errs = runCLI(t, r.env(home, t0.Add(25*time.Hour)), "update")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "canteen (bundled): unchanged\n")
	assert.EqualValues(t, 0, r.fetches.Load())
	assert.Empty(t, loadState(t, home).Bundled["canteen"].Hash)

	// Nothing left: exit 1 again.
	code, _, errs = runCLI(t, r.env(home, t0.Add(25*time.Hour)), "remove", "canteen")
	require.Equal(t, 1, code)
	assert.Contains(t, errs, "nothing to remove")

	// The link moving on is fetched and judged against the bundled copy.
	r.push("canteen", "tools/crowd.yaml", crowdReturns("later"))
	code, out, errs = runCLI(t, r.env(home, t0.Add(50*time.Hour)), "update")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "canteen (bundled): updated 1.0.0 → 1.1.0")
}

// A pending (wider) update of a bundled document is dropped by remove too;
// the pending commit counts as seen, so the next check does not hold it
// again.
func TestRemoveBundledPendingUpdate(t *testing.T) {
	r := newBundledRepo(t)
	home := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	r.push("canteen", "PLUGIN.md", func(s string) string {
		return strings.Replace(canteenV("1.2.0")(s), "paths: [/api/crowd]", "paths: [/api/crowd, /api/menu]", 1)
	})
	code, out, errs := runCLI(t, r.env(home, t0), "update")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "canteen (bundled): update 1.2.0 asks for wider access")
	pending := loadState(t, home).Bundled["canteen"].Pending
	require.NotNil(t, pending)

	code, out, errs = runCLI(t, r.env(home, t0), "remove", "canteen")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "removed the pending update 1.2.0 of the bundled official canteen; the bundled 1.0.0 is in use again")
	e := loadState(t, home).Bundled["canteen"]
	assert.Nil(t, e.Pending)
	assert.Equal(t, pending.Commit, e.Commit)
	code, _, errs = runCLI(t, r.env(home, t0), "accept", "canteen")
	require.Equal(t, 1, code)
	assert.Contains(t, errs, "no pending update")

	r.reset()
	code, out, errs = runCLI(t, r.env(home, t0.Add(25*time.Hour)), "update")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "canteen (bundled): unchanged\n")
	assert.Nil(t, loadState(t, home).Bundled["canteen"].Pending, "not held again")
}

// An installed document standing in for a bundled one is removed as
// before; when the bundled document has a stored update, remove says it
// is back with it, and that a second remove goes back to the bundled copy.
func TestRemoveInstalledOverBundledUpdate(t *testing.T) {
	r := newBundledRepo(t)
	home := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	r.push("canteen", "PLUGIN.md", canteenV("1.1.0"))
	code, _, errs := runCLI(t, r.env(home, t0), "update")
	require.Equal(t, 0, code, errs)
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":        "---\nid: canteen\nname: C\ndescription: C.\nversion: 9.0.0\n---\nI.\n",
		"tools/count.yaml": "description: C.\neffect: read\nsteps:\n  - return: '1'\n",
	})
	code, _, errs = runCLI(t, r.env(home, t0), "install", dir, "--yes")
	require.Equal(t, 0, code, errs)

	code, out, errs := runCLI(t, r.env(home, t0), "remove", "canteen")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "removed canteen; it had no stored data; the bundled official canteen is in use again, with the update 1.1.0 stored from its link (harness remove canteen again goes back to the bundled 1.0.0)\n")
	code, out, errs = runCLI(t, r.env(home, t0), "remove", "canteen")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "removed the update 1.1.0 stored from its link of the bundled official canteen")
}
