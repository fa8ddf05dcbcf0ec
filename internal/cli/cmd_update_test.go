package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// updDoc is a PLUGIN.md; front is extra front matter, body may hold fenced tools.
func updDoc(id, version, front, body string) string {
	return fmt.Sprintf("---\nid: %s\nname: 示例 %s\ndescription: Test document %s.\nversion: %s\n%s---\nUse the tools.\n%s", id, id, id, version, front, body)
}

const (
	frontCard   = "requires: [campus-session]\naccess:\n  campus:\n    - service: card\n      paths: [/api/]\n  abilities: [kv]\n"
	frontNarrow = "requires: [campus-session]\naccess:\n  campus:\n    - service: card\n      paths: [/api/]\n"
	frontWider  = "requires: [campus-session]\naccess:\n  campus:\n    - service: card\n      paths: [/api/]\n    - treehole\n  abilities: [kv]\n"
)

func folder(dir, text string) map[string]string { return map[string]string{dir + "/PLUGIN.md": text} }

func mergeFiles(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// installAt stores a link's document as install does.
func installAt(t *testing.T, home, link, gitBase string, at time.Time) {
	t.Helper()
	l, err := fetch.ParseLink(link)
	require.NoError(t, err)
	d, err := fetch.Fetch(context.Background(), l, fetch.Options{GitBase: gitBase})
	require.NoError(t, err)
	st, err := fetch.OpenStore(home)
	require.NoError(t, err)
	st.Now = func() time.Time { return at }
	p, _ := manifest.Parse(d.Files)
	require.NoError(t, st.Install(context.Background(), fetch.Entry{ID: p.ID, Name: p.Name, Version: p.Version, Link: l.String(), Kind: l.Kind,
		Ref: d.Ref, Commit: d.Commit, Path: d.Path, ETag: d.ETag, LastModified: d.LastModified, Trust: d.Trust, Enabled: true}, d.Files, false))
}

func loadState(t *testing.T, home string) *fetch.State {
	t.Helper()
	st, err := fetch.OpenStore(home)
	require.NoError(t, err)
	s, err := st.Load()
	require.NoError(t, err)
	return s
}

func TestUpdateGitHub(t *testing.T) {
	s := newUpdGitServer(t)
	home := t.TempDir()
	r1, r2 := s.repo("alice/plugins"), s.repo("bob/more")
	s.commit(r1, mergeFiles(folder("a", updDoc("a", "1.0.0", frontCard, "")), folder("b", updDoc("b", "1.0.0", frontCard, ""))))
	s.commit(r2, folder("c", updDoc("c", "1.2.0", frontCard, "")))
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for _, l := range []string{"https://github.com/alice/plugins/tree/main/a", "https://github.com/alice/plugins/tree/main/b", "https://github.com/bob/more/tree/main/c"} {
		installAt(t, home, l, s.srv.URL, t0)
	}
	before := loadState(t, home)
	env := func(at time.Time) map[string]string {
		// installed links only: bundled documents have tests of their own
		return map[string]string{"HARNESS_HOME": home, "HARNESS_GIT_BASE": s.srv.URL, "HARNESS_NOW": at.Format(time.RFC3339), "HARNESS_BUNDLED_UPDATES": "off"}
	}

	// Unchanged: one ref listing per repository, no object fetched.
	s.reset()
	code, out, errs := runCLI(t, env(t0), "update")
	require.Equal(t, 0, code, errs)
	require.Equal(t, "a: unchanged\nb: unchanged\nc: unchanged\n", out)
	require.EqualValues(t, 2, s.listings.Load())
	require.EqualValues(t, 0, s.fetches.Load())
	for id, e := range loadState(t, home).Plugins {
		require.Equal(t, t0, e.LastChecked.UTC(), id)
	}

	// At most daily: an hour later nothing is asked.
	s.reset()
	code, out, _ = runCLI(t, env(t0.Add(time.Hour)), "update")
	require.Equal(t, 0, code)
	require.Contains(t, out, "a: not due")
	require.EqualValues(t, 0, s.listings.Load()+s.fetches.Load())

	// New versions: a narrower, b wider, c a downgrade.
	s.commit(r1, mergeFiles(folder("a", updDoc("a", "1.1.0", frontNarrow, "")), folder("b", updDoc("b", "1.1.0", frontWider, ""))))
	s.commit(r2, folder("c", updDoc("c", "1.1.0", frontNarrow, "")))

	// --check reports and changes nothing.
	code, out, _ = runCLI(t, env(t0.Add(25*time.Hour)), "update", "--check")
	require.Equal(t, 0, code)
	require.Contains(t, out, "a: would update 1.0.0 → 1.1.0")
	after := loadState(t, home)
	for id, e := range after.Plugins {
		require.Equal(t, before.Plugins[id].Hash, e.Hash)
		require.Nil(t, e.Pending)
		require.Equal(t, t0, e.LastChecked.UTC(), "--check records nothing")
	}

	code, out, errs = runCLI(t, env(t0.Add(25*time.Hour)), "update")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "a: updated 1.0.0 → 1.1.0")
	require.Contains(t, out, "- ability kv is no longer used")
	require.Contains(t, out, "b: update 1.1.0 asks for wider access")
	require.Contains(t, out, "+ new campus service treehole")
	require.Contains(t, out, "c: update held: downgrade")
	st := loadState(t, home)
	a, b, c := st.Plugins["a"], st.Plugins["b"], st.Plugins["c"]
	require.NotEqual(t, before.Plugins["a"].Hash, a.Hash)
	require.Equal(t, "1.1.0", a.Version)
	require.Nil(t, a.Pending)
	require.NotNil(t, a.LastUpdate())
	require.Equal(t, "1.0.0", a.LastUpdate().FromVersion)
	require.Contains(t, strings.Join(a.LastUpdate().Changes, "\n"), "kv")
	require.Equal(t, before.Plugins["b"].Hash, b.Hash, "wider waits")
	require.NotNil(t, b.Pending)
	require.True(t, b.Pending.Wider)
	require.Equal(t, before.Plugins["c"].Hash, c.Hash, "a downgrade waits")
	require.NotNil(t, c.Pending)
	require.True(t, c.Pending.Downgrade)
	require.Contains(t, c.Pending.Warning(), "lower")
	home0, err := fetch.OpenStore(home)
	require.NoError(t, err)
	_, err = home0.Files(b.Hash)
	require.NoError(t, err, "the installed version of b keeps working")
	_, err = home0.Files(b.Pending.Hash)
	require.NoError(t, err, "the pending version is stored")

	// list shows what changed, what waits and why a downgrade is held.
	code, out, _ = runCLI(t, env(t0.Add(25*time.Hour)), "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "a: last update 1.0.0 -> 1.1.0")
	require.Contains(t, out, "applied by itself (same or narrower access)")
	require.Contains(t, out, "b: pending update asking for wider access 1.1.0")
	require.Contains(t, out, "c: pending update (downgrade)")
	require.Contains(t, out, "    warning: ")

	// A pending update still named by the link costs no fetch the next day.
	s.reset()
	code, out, _ = runCLI(t, env(t0.Add(50*time.Hour)), "update")
	require.Equal(t, 0, code)
	require.Contains(t, out, "b: unchanged; an update is still pending")
	require.EqualValues(t, 0, s.fetches.Load())

	// Accept b's wider update.
	code, out, errs = runCLI(t, env(t0.Add(51*time.Hour)), "accept", "b")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "b: accepted 1.0.0 → 1.1.0")
	require.Contains(t, out, "+ treehole: 北大树洞", "the marked sheet is shown")
	require.Contains(t, out, "  card: 校园卡")
	b = loadState(t, home).Plugins["b"]
	require.Nil(t, b.Pending)
	require.Equal(t, "1.1.0", b.Version)
	require.True(t, b.LastUpdate().Accepted)
	code, _, errs = runCLI(t, env(t0.Add(51*time.Hour)), "accept", "b")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "no pending update")
	code, _, _ = runCLI(t, env(t0.Add(51*time.Hour)), "accept", "nosuch")
	require.Equal(t, 1, code)

	// A failing server: exit 0, the error is kept, the installed versions stay.
	s.fail.Store(1)
	code, out, _ = runCLI(t, env(t0.Add(80*time.Hour)), "update")
	require.Equal(t, 0, code)
	require.Contains(t, out, "a: check failed")
	st = loadState(t, home)
	for _, id := range []string{"a", "b", "c"} {
		e := st.Plugins[id]
		require.NotEmpty(t, e.LastError, id)
		_, err := home0.Files(e.Hash)
		require.NoError(t, err)
	}
	require.NotNil(t, st.Plugins["c"].Pending, "a failed check keeps what was pending")
	s.fail.Store(0)

	// The next good check clears the error; --json reports.
	code, out, _ = runCLI(t, env(t0.Add(81*time.Hour)), "update", "--force", "--json")
	require.Equal(t, 0, code)
	var reps []updateReport
	require.NoError(t, json.Unmarshal([]byte(out), &reps))
	require.Len(t, reps, 3)
	require.Equal(t, "unchanged", reps[0].Status)
	require.Empty(t, loadState(t, home).Plugins["a"].LastError)
}

// urlServer serves one PLUGIN.md with an ETag and answers conditional
// requests; it counts requests and full answers.
type urlServer struct {
	mu       sync.Mutex
	body     string
	status   int
	requests atomic.Int64
	full     atomic.Int64
	srv      *httptest.Server
}

func newURLServer(t *testing.T, body string) *urlServer {
	u := &urlServer{body: body}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.requests.Add(1)
		u.mu.Lock()
		body, status := u.body, u.status
		u.mu.Unlock()
		if status != 0 {
			http.Error(w, "nope", status)
			return
		}
		etag := fmt.Sprintf(`"%x"`, len(body)*7919+int(body[len(body)-2]))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		u.full.Add(1)
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *urlServer) set(body string, status int) {
	u.mu.Lock()
	u.body, u.status = body, status
	u.mu.Unlock()
}

func TestUpdateURL(t *testing.T) {
	home := t.TempDir()
	u := newURLServer(t, updDoc("news", "1.0.0", frontCard, ""))
	link := u.srv.URL + "/news/PLUGIN.md"
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	code, out, errs := runCLI(t, nil, "review", link)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "Link: "+link+"\n")
	installAt(t, home, link, "", t0)
	env := func(at time.Time) map[string]string {
		// installed links only: bundled documents have tests of their own
		return map[string]string{"HARNESS_HOME": home, "HARNESS_NOW": at.Format(time.RFC3339), "HARNESS_BUNDLED_UPDATES": "off"}
	}
	installed := loadState(t, home).Plugins["news"]
	require.NotEmpty(t, installed.ETag)

	// Unchanged: one conditional request, answered 304.
	u.requests.Store(0)
	u.full.Store(0)
	code, out, errs = runCLI(t, env(t0), "update")
	require.Equal(t, 0, code, errs)
	require.Equal(t, "news: unchanged\n", out)
	require.EqualValues(t, 1, u.requests.Load())
	require.EqualValues(t, 0, u.full.Load(), "no document transferred")

	// Not due an hour later: no request at all.
	code, _, _ = runCLI(t, env(t0.Add(time.Hour)), "update")
	require.Equal(t, 0, code)
	require.EqualValues(t, 1, u.requests.Load())

	// Narrower: applied.
	u.set(updDoc("news", "1.1.0", frontNarrow, ""), 0)
	code, out, _ = runCLI(t, env(t0.Add(25*time.Hour)), "update")
	require.Equal(t, 0, code)
	require.Contains(t, out, "news: updated 1.0.0 → 1.1.0")
	e := loadState(t, home).Plugins["news"]
	require.Equal(t, "1.1.0", e.Version)
	require.NotEqual(t, installed.ETag, e.ETag, "the new validators are kept")

	// Wider: pending, then accepted.
	u.set(updDoc("news", "1.2.0", frontWider, ""), 0)
	code, out, _ = runCLI(t, env(t0.Add(50*time.Hour)), "update", "--json")
	require.Equal(t, 0, code)
	var reps []updateReport
	require.NoError(t, json.Unmarshal([]byte(out), &reps))
	require.Equal(t, "pending", reps[0].Status)
	require.True(t, reps[0].Wider)
	require.NotNil(t, reps[0].Sheet)
	require.True(t, reps[0].Sheet.Campus[1].Wider, "%+v", reps[0].Sheet.Campus)
	e = loadState(t, home).Plugins["news"]
	require.Equal(t, "1.1.0", e.Version)
	require.NotNil(t, e.Pending)
	code, _, errs = runCLI(t, env(t0.Add(51*time.Hour)), "accept", "news")
	require.Equal(t, 0, code, errs)
	require.Equal(t, "1.2.0", loadState(t, home).Plugins["news"].Version)

	// Same version, other content, same access: the content hash is the
	// identity, so it applies at once, and the record says so.
	u.set(updDoc("news", "1.2.0", frontWider, "More words.\n"), 0)
	code, out, _ = runCLI(t, env(t0.Add(80*time.Hour)), "update")
	require.Equal(t, 0, code)
	require.Contains(t, out, "news: updated 1.2.0 → 1.2.0 (same or narrower access)\n    content changed, version unchanged\n")
	e = loadState(t, home).Plugins["news"]
	require.Nil(t, e.Pending)
	require.NotNil(t, e.LastUpdate())
	require.Equal(t, "content changed, version unchanged", e.LastUpdate().Changes[0])
	// what changed is shown, not counted: the new line itself
	require.Contains(t, out, "\n          @@ -1 +1,2 @@\n           Use the tools.\n          +More words.\n")
	require.Contains(t, e.LastUpdate().Changes, "      +More words.")
	code, out, _ = runCLI(t, env(t0.Add(81*time.Hour)), "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "\n          +More words.\n", "harness list shows the record's diff")

	// Gone and server errors: recorded, the installed version stays.
	for _, status := range []int{http.StatusNotFound, http.StatusInternalServerError} {
		u.set(updDoc("news", "1.3.0", frontNarrow, ""), status)
		code, out, _ = runCLI(t, env(t0.Add(200*time.Hour)), "update", "--force")
		require.Equal(t, 0, code)
		require.Contains(t, out, "news: check failed")
		e = loadState(t, home).Plugins["news"]
		require.Equal(t, "1.2.0", e.Version)
		require.Contains(t, e.LastError, fmt.Sprint(status))
	}

	// A hostile new version (not a document) is refused, nothing changes.
	u.set("<html><body>hi</body></html>\n", 0)
	code, out, _ = runCLI(t, env(t0.Add(300*time.Hour)), "update", "--force")
	require.Equal(t, 0, code)
	require.Contains(t, out, "news: check failed")
	require.Equal(t, "1.2.0", loadState(t, home).Plugins["news"].Version)
}

func TestUpdateSkipsLocalPaths(t *testing.T) {
	home := t.TempDir()
	dir := writeDoc(t, t.TempDir(), map[string]string{"PLUGIN.md": updDoc("mine", "1.0.0", "", "")})
	installAt(t, home, dir, "", time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "update")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "mine: not checked: installed from a local path")
	code, out, _ = runCLI(t, map[string]string{"HARNESS_HOME": home}, "update", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"status": "skipped"`)
	code, _, errs = runCLI(t, map[string]string{"HARNESS_HOME": home}, "accept", "mine")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "no pending update")
}
