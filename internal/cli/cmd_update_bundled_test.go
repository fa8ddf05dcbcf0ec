package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/stretchr/testify/require"
)

// bundledRepo serves the official repository on a loopback git server, each
// bundled document in the folder of its id, as the build bundles it.
type bundledRepo struct {
	*updGitServer
	dir   string
	files map[string]string // the tree served: ID/NAME -> content
}

func newBundledRepo(t *testing.T) *bundledRepo {
	t.Helper()
	s := newUpdGitServer(t)
	all, err := official.Files()
	require.NoError(t, err)
	r := &bundledRepo{updGitServer: s, dir: s.repo("pkuinfo/pku-harness-plugins"), files: map[string]string{}}
	for id, files := range all {
		for name, b := range files {
			r.files[id+"/"+name] = string(b)
		}
	}
	r.commit(r.dir, r.files)
	return r
}

// push commits the tree with fn applied to the file id/name.
func (r *bundledRepo) push(id, name string, fn func(string) string) {
	r.T.Helper()
	r.files[id+"/"+name] = fn(r.files[id+"/"+name])
	r.commit(r.dir, maps.Clone(r.files))
}

func (r *bundledRepo) env(home string, at time.Time) map[string]string {
	return map[string]string{"HARNESS_HOME": home, "HARNESS_GIT_BASE": r.srv.URL, "HARNESS_NOW": at.Format(time.RFC3339)}
}

// canteenV rewrites a document's version.
func canteenV(v string) func(string) string {
	return func(s string) string { return versionRe.ReplaceAllString(s, "\nversion: "+v+"\n") }
}

var versionRe = regexp.MustCompile(`\nversion: [0-9.]+\n`)

// crowdReturns makes the canteen's crowd tool return a constant (no
// request: the same access, other steps).
func crowdReturns(v string) func(string) string {
	return func(s string) string {
		i := strings.Index(s, "\nsteps:\n")
		return s[:i] + "\nsteps:\n  - return: '{served: \"" + v + "\"}'\n"
	}
}

func updateReports(t *testing.T, out string) map[string]updateReport {
	t.Helper()
	var reps []updateReport
	require.NoError(t, json.Unmarshal([]byte(out), &reps), out)
	m := map[string]updateReport{}
	for _, r := range reps {
		m[r.ID] = r
	}
	return m
}

// A bundled document updates from its link in the official repository,
// served here by a loopback git server: the link as built is unchanged
// (one ref listing for all seven, one fetch each the first time, none the
// next day), a newer version of the same access applies at once, is stored
// with official trust and is what run, tools and list use.
func TestUpdateBundledSameAccessApplies(t *testing.T) {
	r := newBundledRepo(t)
	home := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

	r.reset()
	code, out, errs := runCLI(t, r.env(home, t0), "update", "--json")
	require.Equal(t, 0, code, errs)
	reps := updateReports(t, out)
	require.Len(t, reps, len(official.Names))
	for _, id := range official.Names {
		require.Equal(t, "unchanged", reps[id].Status, "%s: %+v", id, reps[id])
		require.True(t, reps[id].Bundled, id)
	}
	st := loadState(t, home)
	require.Empty(t, st.Plugins, "nothing is installed")
	require.Len(t, st.Bundled, len(official.Names))
	commit := st.Bundled["canteen"].Commit
	require.Len(t, commit, 40)
	require.Empty(t, st.Bundled["canteen"].Hash, "the bundled copy is in use")
	code, out, _ = runCLI(t, r.env(home, t0), "list")
	require.Equal(t, 0, code)
	require.Equal(t, "no documents installed\n", out, "nothing to say of an unchanged bundled copy")

	// The next day: one ref listing for the repository shows the same
	// commit, nothing is fetched.
	r.reset()
	code, out, errs = runCLI(t, r.env(home, t0.Add(25*time.Hour)), "update")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "canteen (bundled): unchanged\n")
	require.EqualValues(t, 1, r.listings.Load())
	require.EqualValues(t, 0, r.fetches.Load())

	// A newer version, same access, other steps: applied at once.
	r.push("canteen", "PLUGIN.md", canteenV("1.1.0"))
	r.push("canteen", "tools/crowd.yaml", crowdReturns("update"))
	code, out, errs = runCLI(t, r.env(home, t0.Add(50*time.Hour)), "update")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "canteen (bundled): updated 1.0.0 → 1.1.0 (same or narrower access)\n")
	require.Contains(t, out, "tool crowd: the steps changed")
	require.Contains(t, out, "wallet (bundled): unchanged\n", "the other documents' folders did not change")
	e := loadState(t, home).Bundled["canteen"]
	require.Equal(t, "1.1.0", e.Version)
	require.Equal(t, fetch.TrustOfficial, e.Trust, "from the official repository: official")
	require.Equal(t, official.Link("canteen"), e.Link)
	store, err := fetch.OpenStore(home)
	require.NoError(t, err)
	_, err = store.Files(e.Hash)
	require.NoError(t, err, "stored like an installed version")
	require.NotNil(t, e.LastUpdate())
	require.Equal(t, "1.0.0", e.LastUpdate().FromVersion)

	// run, tools and list use the update.
	code, out, errs = runCLI(t, r.env(home, t0.Add(50*time.Hour)), "run", "canteen", "crowd")
	require.Equal(t, 0, code, errs)
	require.JSONEq(t, `{"served":"update"}`, out)
	code, out, errs = runCLI(t, r.env(home, t0.Add(50*time.Hour)), "list")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "bundled official documents (updated from their links):\n")
	require.Regexp(t, `canteen\s+1\.1\.0 \(updated from bundled 1\.0\.0\)\s+official\s+`+regexpQuote(e.Hash)+`\s+`+regexpQuote(official.Link("canteen")), out)
	require.Contains(t, out, "canteen (bundled): last update 1.0.0 -> 1.1.0")
	var found map[string]any
	for _, m := range listJSON(t, r.env(home, t0.Add(50*time.Hour))) {
		if m["id"] == "canteen" {
			found = m
		}
	}
	require.NotNil(t, found)
	require.Equal(t, true, found["bundled"])
	require.Equal(t, true, found["updated"])
	require.Equal(t, "1.1.0", found["version"])
	require.Equal(t, "1.0.0", found["bundledVersion"])
	require.Equal(t, "official", found["trust"])

	// The next check compares against the update in use: unchanged.
	r.reset()
	code, out, _ = runCLI(t, r.env(home, t0.Add(75*time.Hour)), "update")
	require.Equal(t, 0, code)
	require.Contains(t, out, "canteen (bundled): unchanged\n")
	require.EqualValues(t, 0, r.fetches.Load())
}

func regexpQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `.`, `\.`, `+`, `\+`, `*`, `\*`, `?`, `\?`, `(`, `\(`, `)`, `\)`, `[`, `\[`, `]`, `\]`, `{`, `\{`, `}`, `\}`, `^`, `\^`, `$`, `\$`, `|`, `\|`)
	return r.Replace(s)
}

// Wider access at a bundled document's link waits; the bundled copy keeps
// working until harness accept applies it; an older version than the
// bundled copy is refused outright (the floor), and nothing is stored.
func TestUpdateBundledWiderHeldOlderRefused(t *testing.T) {
	r := newBundledRepo(t)
	home := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	wider := func(s string) string {
		return strings.Replace(s, "paths: [/api/crowd]", "paths: [/api/crowd, /api/menu]", 1)
	}

	// An older version (of the same access) is refused: the floor.
	r.push("canteen", "PLUGIN.md", canteenV("0.9.0"))
	code, out, errs := runCLI(t, r.env(home, t0), "update", "--json")
	require.Equal(t, 0, code, errs)
	rep := updateReports(t, out)["canteen"]
	require.Equal(t, "refused", rep.Status, "%+v", rep)
	require.False(t, rep.Applied)
	require.Contains(t, rep.Warning, "lower than the bundled 1.0.0")
	e := loadState(t, home).Bundled["canteen"]
	require.Empty(t, e.Hash, "nothing stored")
	require.Nil(t, e.Pending, "nothing to accept")
	require.Contains(t, e.LastError, "floor")
	code, _, errs = runCLI(t, r.env(home, t0), "accept", "canteen")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "no pending update")
	code, out, _ = runCLI(t, r.env(home, t0.Add(25*time.Hour)), "update")
	require.Equal(t, 0, code)
	require.Contains(t, out, "canteen (bundled): update refused: version 0.9.0 is lower than the bundled 1.0.0, which is the floor: refused; the bundled 1.0.0 keeps working\n")

	// Wider: held as pending, the bundled copy in use.
	r.push("canteen", "PLUGIN.md", func(s string) string { return wider(canteenV("1.2.0")(s)) })
	code, out, errs = runCLI(t, r.env(home, t0.Add(50*time.Hour)), "update")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "canteen (bundled): update 1.2.0 asks for wider access and waits for your confirmation; the bundled 1.0.0 keeps working\n")
	require.Contains(t, out, "harness accept canteen applies it")
	e = loadState(t, home).Bundled["canteen"]
	require.Empty(t, e.Hash)
	require.Empty(t, e.LastError)
	require.NotNil(t, e.Pending)
	require.True(t, e.Pending.Wider)
	require.Equal(t, "1.2.0", e.Pending.Version)
	code, out, _ = runCLI(t, r.env(home, t0.Add(50*time.Hour)), "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "canteen (bundled): pending update asking for wider access 1.2.0")
	require.Regexp(t, `canteen\s+1\.0\.0 \(bundled\)\s+official`, out)

	// accept shows the marked sheet and applies it.
	code, out, errs = runCLI(t, r.env(home, t0.Add(51*time.Hour)), "accept", "canteen")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "canteen (bundled): accepted 1.0.0 → 1.2.0")
	require.Contains(t, out, "/api/menu")
	e = loadState(t, home).Bundled["canteen"]
	require.Nil(t, e.Pending)
	require.Equal(t, "1.2.0", e.Version)
	require.True(t, e.LastUpdate().Accepted)
	require.Equal(t, fetch.TrustOfficial, e.Trust)
	code, _, errs = runCLI(t, r.env(home, t0.Add(51*time.Hour)), "accept", "canteen")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "no pending update")

	// The link back at a version between the bundled copy and the update:
	// a downgrade of the update, held as one (not below the floor).
	r.push("canteen", "PLUGIN.md", canteenV("1.1.0"))
	code, out, _ = runCLI(t, r.env(home, t0.Add(80*time.Hour)), "update")
	require.Equal(t, 0, code)
	require.Contains(t, out, "canteen (bundled): update held: downgrade: version 1.1.0 is lower than the installed 1.2.0")
	e = loadState(t, home).Bundled["canteen"]
	require.Equal(t, "1.2.0", e.Version)
	require.True(t, e.Pending.Downgrade)
}

// --check reports the bundled documents too and changes nothing: no state
// is written, nothing stored.
func TestUpdateBundledCheckChangesNothing(t *testing.T) {
	r := newBundledRepo(t)
	home := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	r.push("canteen", "PLUGIN.md", canteenV("1.1.0"))
	code, out, errs := runCLI(t, r.env(home, t0), "update", "--check")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "canteen (bundled): would update 1.0.0 → 1.1.0 (same or narrower access)\n")
	require.NoFileExists(t, home+"/state.json")
	require.NoDirExists(t, home+"/store")
	code, out, errs = runCLI(t, r.env(home, t0), "update", "--check", "--json")
	require.Equal(t, 0, code, errs)
	rep := updateReports(t, out)["canteen"]
	require.Equal(t, "apply", rep.Status)
	require.False(t, rep.Applied)
	require.True(t, rep.Bundled)
	require.NotNil(t, rep.Sheet)
	require.Equal(t, "official", rep.Sheet.Trust)
	require.NoFileExists(t, home+"/state.json")
}

// The bundled copy is the floor: a stored update older than the build's
// bundled copy (a newer build came since) is not used; the bundled copy is,
// list says why, and the next update drops the stored one. A check that
// fails leaves the copy in use working.
func TestUpdateBundledNewerBuildWins(t *testing.T) {
	r := newBundledRepo(t)
	home := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	all, err := official.Files()
	require.NoError(t, err)
	old := manifest.Files(maps.Clone(all["canteen"]))
	old["PLUGIN.md"] = []byte(canteenV("0.8.0")(string(old["PLUGIN.md"])))
	old["tools/crowd.yaml"] = []byte(strings.Replace(string(old["tools/crowd.yaml"]), "How many people", "OLD UPDATE: how many people", 1))
	store, err := fetch.OpenStore(home)
	require.NoError(t, err)
	var oldHash string
	require.NoError(t, store.Update(t.Context(), func(tx *fetch.Tx) error {
		h, err := tx.Put(old)
		oldHash = h
		tx.State.Bundled = map[string]*fetch.Entry{"canteen": {ID: "canteen", Link: official.Link("canteen"), Kind: fetch.KindGitHub,
			Ref: "refs/heads/main", Hash: h, Version: "0.8.0", Trust: "official", Enabled: true, LastChecked: t0}}
		return err
	}))

	code, out, errs := runCLI(t, r.env(home, t0), "tools", "--json")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "How many people are in each campus canteen")
	require.NotContains(t, out, "OLD UPDATE", "the older stored update is not used")
	code, out, errs = runCLI(t, r.env(home, t0), "list")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "canteen (bundled): the bundled copy 1.0.0 is newer than the stored update 0.8.0")

	// A failing server: the bundled copy keeps working, the stored update
	// stays until a check is recorded.
	r.fail.Store(1)
	code, out, _ = runCLI(t, r.env(home, t0.Add(25*time.Hour)), "update")
	require.Equal(t, 0, code)
	require.Contains(t, out, "(bundled): check failed, the versions in use keep working")
	r.fail.Store(0)
	code, out, _ = runCLI(t, r.env(home, t0.Add(50*time.Hour)), "update")
	require.Equal(t, 0, code)
	require.Contains(t, out, "canteen (bundled): unchanged\n")
	e := loadState(t, home).Bundled["canteen"]
	require.Empty(t, e.Hash, "the obsolete stored update is dropped")
	require.Empty(t, e.LastError)
	_, err = store.Files(oldHash)
	require.Error(t, err, "and its files removed")
}

// An installed document of a bundled id takes its place: only its own
// link is checked, the bundled one is said to be skipped.
func TestUpdateBundledSkipsReplaced(t *testing.T) {
	r := newBundledRepo(t)
	home := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	dir := writeDoc(t, t.TempDir(), map[string]string{"PLUGIN.md": updDoc("canteen", "3.0.0", "", "")})
	installAt(t, home, dir, "", t0)
	env := r.env(home, t0)
	env["HARNESS_BUNDLED_UPDATES"] = "" // on, as by default
	code, out, errs := runCLI(t, env, "update", "--json")
	require.Equal(t, 0, code, errs)
	var reps []updateReport
	require.NoError(t, json.Unmarshal([]byte(out), &reps))
	var bundledCanteen *updateReport
	for i := range reps {
		if reps[i].ID == "canteen" && reps[i].Bundled {
			bundledCanteen = &reps[i]
		}
	}
	require.NotNil(t, bundledCanteen, out)
	require.Equal(t, "skipped", bundledCanteen.Status)
	require.Contains(t, bundledCanteen.Warning, "takes the bundled document's place")
	require.Nil(t, loadState(t, home).Bundled["canteen"])

	// HARNESS_BUNDLED_UPDATES=off checks installed links only.
	env["HARNESS_BUNDLED_UPDATES"] = "off"
	r.reset()
	code, out, errs = runCLI(t, env, "update", "--force", "--json")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, out, `"bundled": true`)
	require.EqualValues(t, 0, r.listings.Load())
}

// The tests' own environment sends update's bundled checks to a closed
// loopback port: in a fresh home with nothing served, every bundled check
// fails on 127.0.0.1 and the default transport was asked for no other
// address. (The package's TestMain fails the run if any test asked for one.)
func TestUpdateTestEnvironmentStaysOnLoopback(t *testing.T) {
	guardLog()
	home := t.TempDir()
	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "update", "--force", "--json")
	require.Equal(t, 0, code, errs)
	reps := updateReports(t, out)
	require.Len(t, reps, len(official.Names))
	for _, id := range official.Names {
		require.Equal(t, "failed", reps[id].Status, id)
		require.Contains(t, reps[id].Error, "127.0.0.1:1", id)
	}
	dials, refused := guardLog()
	require.Empty(t, refused)
	require.NotEmpty(t, dials)
	for _, d := range dials {
		require.Equal(t, "127.0.0.1:1", d)
	}
	// In production the same links are cloned from github.com: the link is
	// the official repository's, and no base means GitHub's.
	l, err := fetch.ParseLink(official.Link("wallet"))
	require.NoError(t, err)
	u, err := l.CloneURL("")
	require.NoError(t, err)
	require.Equal(t, "https://github.com/pkuinfo/pku-harness-plugins.git", u)
}

// Installing an official release older than the bundled copy stores it,
// says that the bundled copy stays in use (the floor), and the registry
// uses the bundled copy.
func TestInstallOfficialOlderThanBundled(t *testing.T) {
	base, _ := gitRepoServer(t, "pkuinfo/pku-harness-plugins", map[string]string{
		"canteen/PLUGIN.md": fmt.Sprintf(installDoc, "canteen", "0.9.0"),
	})
	env := map[string]string{"HARNESS_HOME": t.TempDir(), "HARNESS_GIT_BASE": base}
	code, out, errs := runCLI(t, env, "install", "https://github.com/pkuinfo/pku-harness-plugins/tree/main/canteen", "--yes")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "installed canteen 0.9.0 (official")
	require.Contains(t, errs, "the bundled canteen 1.0.0 is newer than 0.9.0: it stays in use (the bundled copy is the floor)")
	code, out, errs = runCLI(t, env, "tools", "--json")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "canteen__crowd", "the bundled canteen's tool is offered")
}
