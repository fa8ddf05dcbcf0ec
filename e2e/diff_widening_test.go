package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRedteamDiffEveryWidening runs harness diff --json through the binary
// for each kind of widening docs/review.md lists, and for spellings that
// must be no change: the JSON names the change (path, section, item) and
// says wider; the reverse direction is never wider.
func TestRedteamDiffEveryWidening(t *testing.T) {
	t.Parallel()
	const base = "requires: [campus-session]\naccess:\n  campus:\n    - card\n    - service: portal\n      paths: [/api/scores/, /api/notices]\n  web: [https://news.example.edu.cn]\n  abilities: [kv]\n"
	tool := func(name, effect, flags string) string {
		return "```yaml tool " + name + "\ndescription: t\neffect: " + effect + "\n" + flags + "steps:\n  - return: '1'\n```\n"
	}
	baseTools := tool("balance", "read", "untrusted: true\n") + tool("topup", "money", "userOnly: true\nalwaysAsk: true\n")
	write := func(front, tools string) string {
		return writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": rtDoc("widen", "1.0.0", front, tools)})
	}
	old := write(base, baseTools)
	rep := func(old, new string) string { return strings.Replace(base, old, new, 1) }
	cases := []struct {
		name, front, tools string
		wider              bool
		path, section      string
		item               string
	}{
		{"new campus service", rep("    - card\n", "    - card\n    - treehole\n"), baseTools, true, "access.campus.treehole", "campus", "treehole"},
		{"path list removed", rep("    - service: portal\n      paths: [/api/scores/, /api/notices]\n", "    - portal\n"), baseTools, true, "access.campus.portal.paths", "campus", "portal"},
		{"prefix broadened", rep("/api/scores/", "/api/"), baseTools, true, "access.campus.portal.paths", "campus", "portal"},
		{"prefix without slash", rep("/api/notices]", "/api]"), baseTools, true, "access.campus.portal.paths", "campus", "portal"},
		{"prefix added", rep("/api/notices]", "/api/notices, /admin/]"), baseTools, true, "access.campus.portal.paths", "campus", "portal"},
		{"new web origin", rep("web: [https://news.example.edu.cn]", "web: [https://news.example.edu.cn, https://evil.example.com]"), baseTools, true, "access.web", "web", "https://evil.example.com"},
		{"other port", rep("web: [https://news.example.edu.cn]", "web: [https://news.example.edu.cn, https://news.example.edu.cn:8443]"), baseTools, true, "access.web", "web", "https://news.example.edu.cn:8443"},
		{"http instead of https", rep("https://news", "http://news"), baseTools, true, "access.web", "web", "http://news.example.edu.cn"},
		{"subdomain", rep("web: [https://news.example.edu.cn]", "web: [https://news.example.edu.cn, https://a.news.example.edu.cn]"), baseTools, true, "access.web", "web", "https://a.news.example.edu.cn"},
		{"new ability", rep("abilities: [kv]", "abilities: [kv, clipboard]"), baseTools, true, "access.abilities", "abilities", "clipboard"},
		{"new capability", rep("requires: [campus-session]", "requires: [campus-session, location]"), baseTools, true, "requires", "requires", "location"},
		{"unknown capability", rep("requires: [campus-session]", "requires: [campus-session, teleport]"), baseTools, true, "requires", "requires", "teleport"},
		{"new write tool", base, baseTools + tool("freeze", "write", ""), true, "tools.freeze", "tools", "freeze"},
		{"effect stronger", base, tool("balance", "public", "untrusted: true\n") + tool("topup", "money", "userOnly: true\nalwaysAsk: true\n"), true, "tools.balance.effect", "tools", "balance"},
		{"untrusted dropped", base, tool("balance", "read", "") + tool("topup", "money", "userOnly: true\nalwaysAsk: true\n"), true, "tools.balance.untrusted", "tools", "balance"},
		{"userOnly dropped", base, tool("balance", "read", "untrusted: true\n") + tool("topup", "money", "alwaysAsk: true\n"), true, "tools.topup.userOnly", "tools", "topup"},
		{"alwaysAsk dropped", base, tool("balance", "read", "untrusted: true\n") + tool("topup", "money", "userOnly: true\n"), true, "tools.topup.alwaysAsk", "tools", "topup"},
		{"default mode looser", base + "defaultModes: {money: auto}\n", baseTools, true, "defaultModes.money", "defaultModes", "money"},
		{"legacy id", base + "legacy: {ids: [other]}\n", baseTools, true, "legacy.ids", "legacy", "other"},
		{"new read tool", base, baseTools + tool("history", "read", ""), false, "tools.history", "tools", "history"},
		{"https for http is not wider", base, baseTools, false, "", "", ""},
		{"respelled origin", rep("https://news.example.edu.cn", "HTTPS://News.Example.EDU.cn.:443"), baseTools, false, "", "", ""},
		{"respelled campus", rep("    - card\n", "    - service: card\n"), baseTools, false, "", "", ""},
	}
	type change struct {
		Kind, Path, Section, Item, Message string
		Wider                              bool
	}
	type delta struct {
		Wider   *bool    `json:"wider"`
		Changes []change `json:"changes"`
	}
	diff := func(a, b string) delta {
		t.Helper()
		r := harness(t, t.TempDir(), nil, "diff", a, b, "--json")
		require.Equal(t, 0, r.code, r.stderr)
		var d delta
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
		require.NotNil(t, d.Wider, r.stdout)
		return d
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			from := old
			if c.name == "https for http is not wider" {
				from = write(rep("https://news", "http://news"), baseTools)
			}
			to := write(c.front, c.tools)
			d := diff(from, to)
			require.Equal(t, c.wider, *d.Wider, "%+v", d.Changes)
			for _, ch := range d.Changes {
				require.NotEmpty(t, ch.Message)
				if ch.Wider {
					require.True(t, *d.Wider)
				}
			}
			if c.path == "" {
				for _, ch := range d.Changes {
					require.False(t, ch.Wider, "%+v", ch)
					if strings.HasPrefix(c.name, "respelled") {
						require.NotContains(t, []string{"campus", "web", "abilities", "requires", "tools"}, ch.Section, "a respelling is no access change: %+v", ch)
					}
				}
				return
			}
			var found *change
			for i := range d.Changes {
				if d.Changes[i].Path == c.path && d.Changes[i].Item == c.item {
					found = &d.Changes[i]
				}
			}
			require.NotNil(t, found, "no %s in %+v", c.path, d.Changes)
			require.Equal(t, c.wider, found.Wider)
			require.Equal(t, c.section, found.Section)
			require.Equal(t, c.item, found.Item)
			if c.wider {
				require.False(t, *diff(to, from).Wider, "the reverse of a widening")
			}
		})
	}
}
