package official_test

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parsed(t *testing.T) map[string]*manifest.Plugin {
	t.Helper()
	all, err := official.Files()
	require.NoError(t, err)
	require.Len(t, all, len(official.Names))
	out := map[string]*manifest.Plugin{}
	for id, files := range all {
		p, l := manifest.Parse(files)
		require.False(t, l.HasErrors(), "%s: %v", id, l.Error())
		require.Equal(t, id, p.ID, "the folder is named by the id")
		out[id] = p
	}
	return out
}

// The embedded files are the folder's files that count, byte for byte, so
// the bundled hash is the one `harness hash plugins-official/ID` prints.
func TestEmbeddedFilesAreTheFolders(t *testing.T) {
	all, err := official.Files()
	require.NoError(t, err)
	for _, id := range official.Names {
		disk, err := manifest.ReadDir(id)
		require.NoError(t, err)
		assert.Equal(t, disk.Names(), all[id].Names(), id)
		h1, err := disk.Hash()
		require.NoError(t, err)
		h2, err := all[id].Hash()
		require.NoError(t, err)
		assert.Equal(t, h1, h2, id)
		_, err = official.Documents()[id].Open("PLUGIN.md")
		assert.NoError(t, err, id)
	}
}

func TestDocumentsCompile(t *testing.T) {
	for id, p := range parsed(t) {
		prog, l := interpreter.Compile(p)
		require.False(t, l.HasErrors(), "%s: %v", id, l.Error())
		assert.Len(t, prog.Tools(), len(p.Tools), id)
		assert.NotEmpty(t, p.I18n["en"].Name, "%s has an English name", id)
		for _, tl := range p.Tools {
			assert.NotEmpty(t, p.I18n["en"].Tools[tl.Name].Title, "%s.%s has an English title", id, tl.Name)
		}
	}
}

// Every official document passes its own tests, every tool is exercised by
// at least one case, and the documents with a campus session cover the
// expired session.
func TestOwnTests(t *testing.T) {
	writes := 0
	verification := false
	for _, id := range official.Names {
		t.Run(id, func(t *testing.T) {
			p := parsed(t)[id]
			rep := plugintest.Run(context.Background(), p, plugintest.Options{})
			for _, c := range rep.Cases {
				assert.Empty(t, c.Failures, "%s: %s", c.Pos, c.Name)
			}
			require.True(t, rep.OK(), "%s: %v", id, rep.Problems.Error())
			suite, l := plugintest.Parse(p)
			require.False(t, l.HasErrors())
			tested := map[string]bool{}
			statuses := map[string]bool{}
			for _, c := range suite.Cases() {
				tested[c.Tool] = true
				statuses[c.Expect.Status] = true
			}
			var missing []string
			for _, tl := range p.Tools {
				if !tested[tl.Name] {
					missing = append(missing, tl.Name)
				}
				if tl.Effect != manifest.Read {
					writes++
				}
			}
			sort.Strings(missing)
			assert.Empty(t, missing, "tools without a test case")
			for _, r := range p.Requires {
				if r == "campus-session" {
					assert.True(t, statuses["login_required"], "%s needs a session: a case must cover login_required", id)
				}
			}
			verification = verification || statuses["verification_required"]
		})
	}
	assert.Greater(t, writes, 0, "at least one write tool exercises the effect rules")
	assert.True(t, verification, "some case covers verification_required")
}

func TestNamesAreFolders(t *testing.T) {
	dirs, err := filepath.Glob("*/PLUGIN.md")
	require.NoError(t, err)
	var got []string
	for _, d := range dirs {
		got = append(got, filepath.Dir(d))
	}
	sort.Strings(got)
	assert.Equal(t, official.Names, got)
}

// Each bundled document updates from its folder in the official
// repository: a link the engine reads as official, canonical as written.
func TestLinksAreOfficial(t *testing.T) {
	for _, id := range official.Names {
		l, err := fetch.ParseLink(official.Link(id))
		require.NoError(t, err, id)
		assert.True(t, l.IsOfficial(), id)
		assert.Equal(t, official.Link(id), l.String(), id)
		assert.Equal(t, official.Branch+"/"+id, l.RefPath, id)
	}
}

// TestReferenceSpellings: the official documents write preferences and
// translations as the plugin reference does (preferences keyed by name,
// kinds choice, boolean, text and list, options {value, label}, i18n.en
// items as mappings), so lint gives them none of the warnings the old
// spellings get.
func TestReferenceSpellings(t *testing.T) {
	all, err := official.Files()
	require.NoError(t, err)
	for id, files := range all {
		p, l := manifest.Parse(files)
		for _, d := range l.Items {
			for _, old := range []string{"old spelling", "old shorthand", "outside the plugin reference", "does not have"} {
				assert.NotContains(t, d.String(), old, id)
			}
		}
		for _, pr := range p.Preferences {
			assert.Contains(t, []string{"choice", "boolean", "text", "list"}, pr.Kind, "%s.%s", id, pr.Name)
			for _, op := range pr.Options {
				assert.IsType(t, "", op.Value, "%s.%s", id, pr.Name)
				assert.NotEmpty(t, op.Label, "%s.%s", id, pr.Name)
			}
			assert.NotEmpty(t, p.I18n["en"].Preferences[pr.Name].Title, "%s.%s has an English title", id, pr.Name)
		}
	}
}

// contractCatalogue is the built-in catalogue cut to the CONTRACT's services
// file shape (origin, auth, login.redirect): no login status, no login JSON
// field, no entry points, no fixed headers or query. A host or an outside
// check may hand the documents such a file, whose entries replace the
// built-in ones whole; then a service's own expiry answer (the card's and
// the treehole's HTTP 401, the card's code 401 in a 200 answer, wproc's
// redirect to its cas-login) reaches the tool's steps, and the tool must
// still answer login_required (campus facts §1a, §5, §7, §8).
func contractCatalogue() proxy.Catalogue {
	out := proxy.Catalogue{}
	for name, s := range proxy.Builtin() {
		out[name] = &proxy.Service{
			Name:   name,
			Origin: s.Origin,
			Auth:   proxy.Auth{Cookies: append([]string(nil), s.Auth.Cookies...), Headers: append([]string(nil), s.Auth.Headers...)},
			Login:  proxy.Login{Redirect: "https://iaaa.pku.edu.cn/iaaa/"},
		}
	}
	return out
}

// TestExpiryWithContractServices: every login_required case of every
// document still gives login_required when the services file says only
// where the IAAA login is.
func TestExpiryWithContractServices(t *testing.T) {
	for _, id := range official.Names {
		t.Run(id, func(t *testing.T) {
			p := parsed(t)[id]
			suite, l := plugintest.Parse(p)
			require.False(t, l.HasErrors())
			want := map[[2]string]bool{}
			for _, c := range suite.Cases() {
				if c.Expect.Status == "login_required" {
					want[[2]string{c.File, c.Name}] = true
				}
			}
			if len(want) == 0 {
				return
			}
			rep := plugintest.Run(context.Background(), p, plugintest.Options{
				Catalogue: contractCatalogue(),
				Match:     func(file, name string) bool { return want[[2]string{file, name}] },
			})
			require.Empty(t, rep.Problems.Error())
			assert.Len(t, rep.Cases, len(want))
			for _, c := range rep.Cases {
				assert.Empty(t, c.Failures, "%s: %s", c.Pos, c.Name)
			}
		})
	}
}
