package update

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

var now0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// plugin writes a document's files under folder: front is extra front
// matter; tools maps a name to its effect.
func plugin(folder, id, version, front string, tools map[string]string) map[string]string {
	files := map[string]string{
		folder + "/PLUGIN.md": fmt.Sprintf("---\nid: %s\nname: 示例 %s\ndescription: Test document %s.\nversion: %s\n%s---\nUse the tools.\n", id, id, id, version, front),
	}
	for name, effect := range tools {
		files[folder+"/tools/"+name+".yaml"] = fmt.Sprintf("title: %s\ndescription: Does %s.\neffect: %s\ninput: {type: object}\nsteps:\n  - return: '{ok: true}'\n", name, name, effect)
	}
	return files
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

const cardFront = "requires: [campus-session]\naccess:\n  campus:\n    - service: card\n      paths: [/api/]\n  abilities: [kv]\n"

// install fetches a link as install would and describes the installed copy.
func install(t *testing.T, s *gitServer, lnk string) Installed {
	t.Helper()
	l, err := fetch.ParseLink(lnk)
	require.NoError(t, err)
	g, err := fetch.FetchGit(context.Background(), l, fetch.GitOptions{Base: s.srv.URL})
	require.NoError(t, err)
	files := manifest.Files(g.Files)
	h, err := files.Hash()
	require.NoError(t, err)
	p, dl := manifest.Parse(files)
	require.False(t, dl.HasErrors(), "%v", dl)
	return Installed{ID: p.ID, Link: l.String(), Hash: h, Version: p.Version, Commit: g.Commit, Ref: g.Ref, Plugin: p, LastChecked: now0.Add(-48 * time.Hour)}
}

func (s *gitServer) reset() { s.listings.Store(0); s.fetches.Store(0) }

func TestCheckUnchangedOneListingPerRepository(t *testing.T) {
	s := newGitServer(t)
	r1, r2 := s.repo("alice/plugins"), s.repo("bob/more")
	s.commit(r1, "main", merge(plugin("a", "a", "1.0.0", cardFront, map[string]string{"x": "read"}),
		plugin("b", "b", "1.0.0", "", nil), plugin("c", "c", "1.0.0", "", nil)))
	s.commit(r2, "main", merge(plugin("d", "d", "1.0.0", "", nil), plugin("e", "e", "1.0.0", "", nil)))
	var list []Installed
	for _, f := range []string{"a", "b", "c"} {
		list = append(list, install(t, s, link("alice/plugins", "main", f)))
	}
	for _, f := range []string{"d", "e"} {
		list = append(list, install(t, s, link("bob/more", "main", f)))
	}
	s.reset()
	c := &Checker{Now: now0, GitBase: s.srv.URL}
	res := c.Check(context.Background(), list)
	for _, r := range res {
		require.Equal(t, StatusUnchanged, r.Status, "%s: %v", r.ID, r.Err)
		require.True(t, r.Checked)
	}
	require.EqualValues(t, 2, s.listings.Load(), "one ref listing per repository")
	require.EqualValues(t, 0, s.fetches.Load(), "no object fetched")

	// A commit elsewhere in the repository moves the branch but not the
	// folder: fetched once, same hash, unchanged with the new commit.
	moved := s.commit(r1, "main", merge(plugin("a", "a", "1.0.0", cardFront, map[string]string{"x": "read"}),
		plugin("b", "b", "1.0.0", "", nil), plugin("c", "c", "1.0.1", "", nil)))
	res = c.Check(context.Background(), list[:2])
	for _, r := range res {
		require.Equal(t, StatusUnchanged, r.Status, "%v", r.Err)
		require.Equal(t, moved, r.Commit)
	}
}

func TestCheckNotDue(t *testing.T) {
	s := newGitServer(t)
	r := s.repo("alice/p")
	s.commit(r, "main", plugin("a", "a", "1.0.0", "", nil))
	in := install(t, s, link("alice/p", "main", "a"))
	s.reset()
	in.LastChecked = now0.Add(-23 * time.Hour)
	c := &Checker{Now: now0, GitBase: s.srv.URL}
	res := c.Check(context.Background(), []Installed{in})
	require.Equal(t, StatusNotDue, res[0].Status)
	require.False(t, res[0].Checked)
	require.EqualValues(t, 0, s.listings.Load()+s.fetches.Load(), "nothing asked")

	c.Force = true
	require.Equal(t, StatusUnchanged, c.Check(context.Background(), []Installed{in})[0].Status)
	require.EqualValues(t, 1, s.listings.Load())

	c.Force = false
	c.Now = now0.Add(time.Hour) // a day after the last check
	require.Equal(t, StatusUnchanged, c.Check(context.Background(), []Installed{in})[0].Status)
	require.EqualValues(t, 2, s.listings.Load())
}

// TestCheckVerdicts runs one case per verdict through a real server; the
// rules themselves are tested by TestDiffRules and TestDecide.
func TestCheckVerdicts(t *testing.T) {
	base := plugin("a", "a", "1.0.0", cardFront, map[string]string{"x": "read"})
	for _, c := range []struct {
		name    string
		next    map[string]string
		want    Status
		wider   bool
		warning bool
		change  string
	}{
		{"narrower is applied", plugin("a", "a", "1.1.0", strings.Replace(cardFront, "  abilities: [kv]\n", "", 1), map[string]string{"x": "read"}), StatusApply, false, false, "access.abilities"},
		{"wider is pending", plugin("a", "a", "1.1.0", strings.Replace(cardFront, "paths: [/api/]", "paths: [/]", 1), map[string]string{"x": "read"}), StatusPending, true, false, "access.campus.card.paths"},
		{"same version other content is applied", plugin("a", "a", "1.0.0", cardFront, map[string]string{"x": "read", "y": "read"}), StatusApply, false, false, "tools.y"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newGitServer(t)
			r := s.repo("alice/p")
			s.commit(r, "main", merge(base, plugin("other", "other", "1.0.0", "", nil)))
			in := install(t, s, link("alice/p", "main", "a"))
			commit := s.commit(r, "main", merge(c.next, plugin("other", "other", "1.0.0", "", nil)))
			res := (&Checker{Now: now0, GitBase: s.srv.URL}).Check(context.Background(), []Installed{in})[0]
			require.Equal(t, c.want, res.Status, "%v", res.Err)
			require.Equal(t, commit, res.Commit)
			require.NotEqual(t, in.Hash, res.Hash)
			require.NotNil(t, res.Plugin)
			require.NotEmpty(t, res.Files)
			require.Equal(t, c.wider, res.Decision.Delta.Wider)
			require.Equal(t, c.warning, res.Decision.Warning != "", res.Decision.Warning)
			found := false
			for _, ch := range res.Decision.Delta.Changes {
				found = found || ch.Path == c.change
			}
			require.True(t, found, "no %s in %+v", c.change, res.Decision.Delta.Changes)
		})
	}
}

func TestCheckFailuresAreSurvivable(t *testing.T) {
	s := newGitServer(t)
	r1, r2 := s.repo("alice/p"), s.repo("bob/q")
	s.commit(r1, "main", merge(plugin("a", "a", "1.0.0", "", nil), plugin("b", "b", "1.0.0", "", nil), plugin("h", "h", "1.0.0", "", nil)))
	s.commit(r2, "main", plugin("c", "c", "1.0.0", "", nil))
	a := install(t, s, link("alice/p", "main", "a"))
	b := install(t, s, link("alice/p", "main", "b"))
	h := install(t, s, link("alice/p", "main", "h"))
	cq := install(t, s, link("bob/q", "main", "c"))
	ctx := context.Background()

	// The folder of b is gone, h's new version is hostile (invalid), a is fine.
	files := merge(plugin("a", "a", "1.0.0", "", nil), plugin("h", "h", "1.1.0", "", nil))
	files["h/PLUGIN.md"] = "---\nid: h\nname: [oops\n---\n"
	s.commit(r1, "main", files)
	// bob/q is gone altogether.
	require.NoError(t, os.RemoveAll(filepath.Join(s.root, "bob/q.git")))
	res := (&Checker{Now: now0, GitBase: s.srv.URL}).Check(ctx, []Installed{a, b, h, cq})
	require.Equal(t, StatusUnchanged, res[0].Status, "%v", res[0].Err)
	require.Equal(t, StatusFailed, res[1].Status)
	require.Error(t, res[1].Err)
	require.Equal(t, StatusFailed, res[2].Status)
	require.Contains(t, res[2].Err.Error(), "invalid")
	require.Equal(t, StatusFailed, res[3].Status)
	require.Contains(t, res[3].Err.Error(), "no such repository")
	for _, r := range res {
		require.True(t, r.Checked)
		require.Nil(t, r.Files, "nothing to store for %s", r.ID)
	}

	// A server error.
	s.fail.Store(1)
	res = (&Checker{Now: now0, GitBase: s.srv.URL}).Check(ctx, []Installed{a})
	require.Equal(t, StatusFailed, res[0].Status)
	s.fail.Store(0)

	// A server that never answers: the per-link timeout ends the check.
	s.hang.Store(1)
	start := time.Now()
	res = (&Checker{Now: now0, GitBase: s.srv.URL, Timeout: 300 * time.Millisecond}).Check(ctx, []Installed{a, b})
	require.Equal(t, StatusFailed, res[0].Status)
	require.Equal(t, StatusFailed, res[1].Status)
	require.Less(t, time.Since(start), 20*time.Second)
	s.hang.Store(0)

	// A new id in the same folder is refused.
	s.commit(r1, "main", plugin("a", "zz", "2.0.0", "", nil))
	res = (&Checker{Now: now0, GitBase: s.srv.URL}).Check(ctx, []Installed{a})
	require.Equal(t, StatusFailed, res[0].Status)
	require.Contains(t, res[0].Err.Error(), "id")
}

// TestCheckFollowsTheInstalledRef: a branch added later with the name of
// the pinned commit id, or of the installed tag, makes the same link name
// another ref; the check fails instead of taking it.
func TestCheckFollowsTheInstalledRef(t *testing.T) {
	s := newGitServer(t)
	r := s.repo("alice/pin")
	c1 := s.commit(r, "main", plugin("a", "a", "1.0.0", "", nil))
	s.Git(r, nil, "tag", "v1", c1)
	pinned := install(t, s, link("alice/pin", c1, "a"))
	tagged := install(t, s, link("alice/pin", "v1", "a"))
	require.Empty(t, pinned.Ref)
	require.Equal(t, "refs/tags/v1", tagged.Ref)
	c := &Checker{Now: now0, GitBase: s.srv.URL, Force: true}
	for _, res := range c.Check(context.Background(), []Installed{pinned, tagged}) {
		require.Equal(t, StatusUnchanged, res.Status, res.Err)
	}
	narrower := plugin("a", "a", "1.0.1", "", nil)
	s.commit(r, c1, narrower)
	s.commit(r, "v1", narrower)
	res := c.Check(context.Background(), []Installed{pinned, tagged})
	require.Equal(t, StatusFailed, res[0].Status)
	require.ErrorContains(t, res[0].Err, "now names refs/heads/"+c1+", not the commit "+c1)
	require.Equal(t, StatusFailed, res[1].Status)
	require.ErrorContains(t, res[1].Err, "now names refs/heads/v1, not the refs/tags/v1")
	require.Nil(t, res[0].Files)
}
