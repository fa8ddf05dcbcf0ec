package review

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// doc parses a document from its front-matter lines (after id/name/...) and
// its tools (name -> "effect[,flag...]").
func doc(t testing.TB, front string, tools map[string]string) *manifest.Plugin {
	t.Helper()
	files := manifest.Files{"PLUGIN.md": []byte("---\nid: demo\nname: 示例\ndescription: A demo.\n" + front + "\n---\nUse the tools.\n")}
	for name, spec := range tools {
		parts := strings.Split(spec, ",")
		var b strings.Builder
		fmt.Fprintf(&b, "title: %s\ndescription: Does %s.\neffect: %s\n", name, name, parts[0])
		for _, f := range parts[1:] {
			fmt.Fprintf(&b, "%s: true\n", f)
		}
		b.WriteString("input: {type: object}\nsteps:\n  - return: '{ok: true}'\n")
		files["tools/"+name+".yaml"] = []byte(b.String())
	}
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), "%v", l)
	return p
}

func TestDiffRules(t *testing.T) {
	base := "version: 1.0.0\nrequires: [campus-session]\naccess:\n  campus:\n    - card\n    - service: portal\n      paths: [/api/scores/, /api/notices]\n  web: [https://news.example.edu.cn]\n  abilities: [kv]"
	baseTools := map[string]string{"balance": "read,untrusted", "topup": "money,userOnly,alwaysAsk"}
	cases := []struct {
		name      string
		front     string
		tools     map[string]string
		wider     bool
		wantPath  string // a change with this path must be listed
		wantKind  string
		wantWider bool
	}{
		{"same", base, nil, false, "", "", false},
		{"new campus service", strings.Replace(base, "    - card\n", "    - card\n    - treehole\n", 1), nil, true, "access.campus.treehole", Added, true},
		{"campus service removed", strings.Replace(base, "    - card\n", "", 1), nil, false, "access.campus.card", Removed, false},
		{"path prefix list removed", strings.Replace(base, "    - service: portal\n      paths: [/api/scores/, /api/notices]\n", "    - portal\n", 1), nil, true, "access.campus.portal.paths", Broadened, true},
		{"path prefix broadened", strings.Replace(base, "/api/scores/", "/api/", 1), nil, true, "access.campus.portal.paths", Broadened, true},
		{"path prefix without slash broadened", strings.Replace(base, "/api/notices]", "/api]", 1), nil, true, "access.campus.portal.paths", Broadened, true},
		{"path prefix added", strings.Replace(base, "/api/notices]", "/api/notices, /admin/]", 1), nil, true, "access.campus.portal.paths", Broadened, true},
		{"path prefix narrowed", strings.Replace(base, "/api/scores/", "/api/scores/2024/", 1), nil, false, "access.campus.portal.paths", Narrowed, false},
		{"path prefix dropped", strings.Replace(base, "/api/scores/, ", "", 1), nil, false, "access.campus.portal.paths", Narrowed, false},
		{"path with slash under one without", strings.Replace(base, "/api/notices]", "/api/notices/]", 1), nil, false, "access.campus.portal.paths", Narrowed, false},
		{"new web origin", strings.Replace(base, "web: [https://news.example.edu.cn]", "web: [https://news.example.edu.cn, https://evil.example.com]", 1), nil, true, "access.web", Added, true},
		{"web origin other port", strings.Replace(base, "https://news.example.edu.cn]", "https://news.example.edu.cn, https://news.example.edu.cn:8443]", 1), nil, true, "access.web", Broadened, true},
		{"web origin http instead of https", strings.Replace(base, "https://news.example.edu.cn", "http://news.example.edu.cn", 1), nil, true, "access.web", Broadened, true},
		{"web origin subdomain", strings.Replace(base, "https://news.example.edu.cn]", "https://news.example.edu.cn, https://a.news.example.edu.cn]", 1), nil, true, "access.web", Broadened, true},
		{"web origin removed", strings.Replace(base, "web: [https://news.example.edu.cn]", "web: []", 1), nil, false, "access.web", Removed, false},
		{"new ability", strings.Replace(base, "abilities: [kv]", "abilities: [kv, clipboard]", 1), nil, true, "access.abilities", Added, true},
		{"ability removed", strings.Replace(base, "abilities: [kv]", "abilities: []", 1), nil, false, "access.abilities", Removed, false},
		{"new requires network", strings.Replace(base, "requires: [campus-session]", "requires: [campus-session, network]", 1), nil, true, "requires", Added, true},
		{"new requires background", strings.Replace(base, "requires: [campus-session]", "requires: [campus-session, background]", 1), nil, true, "requires", Added, true},
		{"new requires location", strings.Replace(base, "requires: [campus-session]", "requires: [campus-session, location]", 1), nil, true, "requires", Added, true},
		{"requires removed", strings.Replace(base, "requires: [campus-session]", "requires: []", 1), nil, false, "requires", Removed, false},
		{"new read tool", base, map[string]string{"balance": "read,untrusted", "topup": "money,userOnly,alwaysAsk", "history": "read"}, false, "tools.history", Added, false},
		{"new write tool", base, map[string]string{"balance": "read,untrusted", "topup": "money,userOnly,alwaysAsk", "freeze": "write"}, true, "tools.freeze", Added, true},
		{"new money tool", base, map[string]string{"balance": "read,untrusted", "topup": "money,userOnly,alwaysAsk", "pay": "money"}, true, "tools.pay", Added, true},
		{"new public tool", base, map[string]string{"balance": "read,untrusted", "topup": "money,userOnly,alwaysAsk", "post": "public"}, true, "tools.post", Added, true},
		{"effect stronger", base, map[string]string{"balance": "write,untrusted", "topup": "money,userOnly,alwaysAsk"}, true, "tools.balance.effect", Broadened, true},
		{"effect weaker", base, map[string]string{"balance": "read,untrusted", "topup": "write,userOnly,alwaysAsk"}, false, "tools.topup.effect", Narrowed, false},
		{"untrusted dropped", base, map[string]string{"balance": "read", "topup": "money,userOnly,alwaysAsk"}, true, "tools.balance.untrusted", Broadened, true},
		{"userOnly dropped", base, map[string]string{"balance": "read,untrusted", "topup": "money,alwaysAsk"}, true, "tools.topup.userOnly", Broadened, true},
		{"alwaysAsk dropped", base, map[string]string{"balance": "read,untrusted", "topup": "money,userOnly"}, true, "tools.topup.alwaysAsk", Broadened, true},
		{"untrusted added", base, map[string]string{"balance": "read,untrusted", "topup": "money,userOnly,alwaysAsk,untrusted"}, false, "tools.topup.untrusted", Narrowed, false},
		{"tool removed", base, map[string]string{"balance": "read,untrusted"}, false, "tools.topup", Removed, false},
		{"version", strings.Replace(base, "1.0.0", "1.1.0", 1), nil, false, "version", Changed, false},
		{"default mode looser", base + "\ndefaultModes: {money: auto}", nil, true, "defaultModes.money", Broadened, true},
		{"default mode stricter", base + "\ndefaultModes: {read: ask}", nil, false, "defaultModes.read", Narrowed, false},
		{"legacy id", base + "\nlegacy: {ids: [other]}", nil, true, "legacy.ids", Added, true},
	}
	old := doc(t, base, baseTools)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tools := c.tools
			if tools == nil {
				tools = baseTools
			}
			d := Diff(old, doc(t, c.front, tools))
			require.Equal(t, c.wider, d.Wider, "%+v", d.Changes)
			if c.wantPath == "" {
				require.Empty(t, d.Changes)
				return
			}
			var found *Change
			for i := range d.Changes {
				if d.Changes[i].Path == c.wantPath {
					found = &d.Changes[i]
				}
			}
			require.NotNil(t, found, "no change at %s in %+v", c.wantPath, d.Changes)
			require.Equal(t, c.wantKind, found.Kind, found.Message)
			require.Equal(t, c.wantWider, found.Wider, found.Message)
			require.NotEmpty(t, found.Message)
			// The reverse direction of a widening is never wider.
			if c.wider {
				require.False(t, Diff(doc(t, c.front, tools), old).Wider, "reverse of %s", c.name)
			}
		})
	}
}

func TestDiffNeutral(t *testing.T) {
	old := doc(t, "version: 1.0.0", map[string]string{"a": "read"})
	files := manifest.Files{}
	for k, v := range old.Files {
		files[k] = v
	}
	files["PLUGIN.md"] = []byte("---\nid: demo\nname: 新名字\ndescription: Another text.\nversion: 1.0.1\n---\nNew instructions.\nAnd a second line.\n")
	files["tools/a.yaml"] = []byte("title: A tool\ndescription: Does more.\neffect: read\ninput: {type: object, properties: {x: {type: string}}}\nsteps:\n  - jq: '1'\n  - return: '{ok: false}'\n")
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), "%v", l)
	d := Diff(old, p)
	require.False(t, d.Wider)
	paths := map[string]bool{}
	for _, c := range d.Changes {
		paths[c.Path] = true
		require.False(t, c.Wider, c.Message)
	}
	for _, want := range []string{"version", "name", "description", "instructions", "tools.a.title", "tools.a.description", "tools.a.input", "tools.a.steps"} {
		require.True(t, paths[want], "missing %s in %v", want, paths)
	}
}

// TestDiffNormalised: spellings of the same access are no change.
func TestDiffNormalised(t *testing.T) {
	a := &manifest.Plugin{ID: "x", Requires: []string{"network"}, Access: manifest.Access{
		Campus:    []manifest.CampusAccess{{Service: "portal", Paths: []string{"/api/x/", "/b"}}, {Service: "card"}},
		Web:       []manifest.Origin{{Scheme: "https", Host: "news.example.edu.cn", Port: 443}, {Scheme: "http", Host: "127.0.0.1", Port: 8080}},
		Abilities: []string{"kv"},
	}, Tools: []*manifest.Tool{{Name: "t", Effect: manifest.Write}}}
	b := &manifest.Plugin{ID: "x", Requires: []string{"Network", "network"}, Access: manifest.Access{
		Campus: []manifest.CampusAccess{
			{Service: "Card", Paths: []string{"/", "/z/"}},
			{Service: "portal", Paths: []string{"/b", "./api/./x/", "/api//x/", "/b/c", "/api/y/../x/"}},
		},
		Web: []manifest.Origin{
			{Scheme: "HTTP", Host: "127.0.0.1", Port: 8080},
			{Scheme: "https", Host: "NEWS.example.edu.cn.", Port: 0},
			{Scheme: "https", Host: "news.example.edu.cn", Port: 443},
		},
		Abilities: []string{"KV", "kv"},
	}, Tools: []*manifest.Tool{{Name: "t", Effect: manifest.Write}}}
	d := Diff(a, b)
	require.Empty(t, d.Changes)
	require.Empty(t, Diff(b, a).Changes)
}

// TestDiffToolNamesExact: tool names are compared as the engine runs them,
// exactly: "sendA" and "senda" are two tools, each on its own line of the
// sheet and the diff (folding case once hid one of them).
func TestDiffToolNamesExact(t *testing.T) {
	old := &manifest.Plugin{ID: "x", Tools: []*manifest.Tool{
		{Name: "sendA", Effect: manifest.Public, AlwaysAsk: true},
		{Name: "senda", Effect: manifest.Write, AlwaysAsk: true},
	}}
	new := &manifest.Plugin{ID: "x", Tools: []*manifest.Tool{
		{Name: "sendA", Effect: manifest.Public, AlwaysAsk: true},
		{Name: "senda", Effect: manifest.Money},
	}}
	d := Diff(old, new)
	require.True(t, d.Wider)
	paths := map[string]bool{}
	for _, c := range d.Changes {
		paths[c.Path] = c.Wider
	}
	require.Equal(t, map[string]bool{"tools.senda.effect": true, "tools.senda.alwaysAsk": true}, paths)
	s := NewSheet(new, Info{})
	require.Len(t, s.Tools, 2)
	s.Mark(d, "1.0.0", "")
	for _, l := range s.Tools {
		require.Equal(t, l.Name == "senda", l.Wider, l.Name)
	}
	require.Equal(t, "tools.cardBalance", Diff(&manifest.Plugin{}, &manifest.Plugin{Tools: []*manifest.Tool{{Name: "cardBalance", Effect: manifest.Read}}}).Changes[0].Path)
}

func TestPrefixCovers(t *testing.T) {
	for _, c := range []struct {
		p, q string
		want bool
	}{
		{"/api/", "/api/x", true},
		{"/api/", "/api/", true},
		{"/api/", "/api", false},
		{"/api", "/api/", true},
		{"/api", "/api/x", true},
		{"/api", "/apix", false},
		{"/", "/anything", true},
		{"/a/b/", "/a/", false},
	} {
		require.Equal(t, c.want, prefixCovers(c.p, c.q), "%s covers %s", c.p, c.q)
	}
	require.Equal(t, "/a/b/", normPath("./a/./b/"))
	require.Equal(t, "/a/", normPath("/a/b/.."))
	require.Equal(t, "/", normPath("/../.."))
	require.Equal(t, []string{"/a", "/b/"}, minimalPrefixes([]string{"/a/x", "/b/", "/a", "/b/c", "/a"}))
}

func TestDiffJSONShape(t *testing.T) {
	var sb strings.Builder
	require.NoError(t, Diff(nil, nil).WriteJSON(&sb))
	require.JSONEq(t, `{"wider": false, "changes": []}`, sb.String())
}
