package manifest_test

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reference's words (issue 15, "Words that differ"): each new spelling
// is read, and each old one still is, with a warning that names the new.

const wordsTool = "title: 人数\ndescription: Crowds.\neffect: read\ninput:\n  type: object\n  properties: {q: {type: string}}\nsteps:\n  - return: '1'\n"

func parseWords(t *testing.T, front string, tools map[string]string) (*manifest.Plugin, []string) {
	t.Helper()
	files := manifest.Files{"PLUGIN.md": []byte("---\nid: words\nname: W\ndescription: d\nversion: 1.0.0\n" + front + "---\nhi\n")}
	for name, body := range tools {
		files["tools/"+name+".yaml"] = []byte(body)
	}
	if tools == nil {
		files["tools/crowd.yaml"] = []byte(wordsTool)
	}
	p, l := manifest.Parse(files)
	var out []string
	for _, d := range l.Items {
		out = append(out, d.String())
	}
	return p, out
}

// TestDataSourcesMap: the reference's map NAME: {title, tool, args, ttlMs}
// reads, and the old list (input, ttl in seconds) reads as the same source,
// with warnings at the list, input and ttl.
func TestDataSourcesMap(t *testing.T) {
	p, l := parseWords(t, "dataSources:\n  crowd: {title: 人数, tool: crowd, args: {q: main}, ttlMs: 120000}\n", nil)
	assert.Empty(t, l)
	require.Len(t, p.DataSources, 1)
	want := p.DataSources[0]
	assert.Equal(t, manifest.DataSource{Name: "crowd", Title: "人数", Tool: "crowd", Args: map[string]any{"q": "main"}, TTLMs: 120000, Pos: want.Pos}, want)
	assert.Equal(t, 7, want.Pos.Line)

	old, l := parseWords(t, "dataSources:\n  - {name: crowd, tool: crowd, input: {q: main}, ttl: 120, title: 人数}\n", nil)
	assert.Equal(t, []string{
		"PLUGIN.md:7:3: warning: dataSources as a list of {name, …} is the old spelling: write a mapping keyed by name (name: {…})",
		"PLUGIN.md:7:32: warning: a data source.input is the old spelling of args: write args",
		"PLUGIN.md:7:50: warning: a data source.ttl is the old spelling of ttlMs (ttl is in seconds): write ttlMs",
	}, l)
	require.Len(t, old.DataSources, 1)
	got := old.DataSources[0]
	got.Pos = want.Pos
	assert.Equal(t, want, got, "the old list holds the same source")

	old, _ = parseWords(t, "dataSources:\n  - {name: crowd, tool: crowd}\n", nil)
	assert.Equal(t, int64(300_000), old.DataSources[0].TTLMs, "the old default, 300 seconds")

	for front, msg := range map[string]string{
		"dataSources:\n  crowd: {tool: crowd, ttlMs: 60000}\n":                     `PLUGIN.md:7:10: a data source needs "title"`,
		"dataSources:\n  crowd: {title: t, tool: crowd}\n":                         `PLUGIN.md:7:10: a data source needs "ttlMs"`,
		"dataSources:\n  crowd: {title: t, tool: crowd, ttlMs: 1000}\n":            `PLUGIN.md:7:41: ttlMs must be between 30000 and 604800000`,
		"dataSources:\n  crowd: {title: t, tool: crowd, ttl: 6}\n":                 `PLUGIN.md:7:39: ttl must be between 30 and 604800`,
		"dataSources:\n  Crowd: {title: t, tool: crowd, ttlMs: 60000}\n":           `PLUGIN.md:7:3: dataSources name "Crowd" must match [a-z][A-Za-z0-9_-]* (at most 40 characters)`,
		"dataSources:\n  c: {title: t, tool: crowd, args: {q: 1}, ttlMs: 60000}\n": `PLUGIN.md:7:3: data source "c": its input does not fit tool "crowd"`,
	} {
		_, l := parseWords(t, front, nil)
		assert.Contains(t, strings.Join(l, "\n"), msg, front)
	}
}

// TestLegacyPluginIDs: legacy.pluginIds is the reference's key; legacy.ids
// still reads, with a warning naming pluginIds.
func TestLegacyPluginIDs(t *testing.T) {
	p, l := parseWords(t, "legacy:\n  pluginIds: [old-words]\n  tools: {old-words.count: crowd}\n  widgets: {old-words.card: card}\n", nil)
	assert.Empty(t, l)
	assert.Equal(t, []string{"old-words"}, p.Legacy.IDs)
	assert.Equal(t, map[string]string{"old-words.count": "crowd"}, p.Legacy.Tools)
	assert.Equal(t, map[string]string{"old-words.card": "card"}, p.Legacy.Widgets)

	p, l = parseWords(t, "legacy:\n  ids: [old-words]\n", nil)
	assert.Equal(t, []string{"PLUGIN.md:7:3: warning: legacy.ids is the old spelling of pluginIds: write pluginIds"}, l)
	assert.Equal(t, []string{"old-words"}, p.Legacy.IDs)

	_, l = parseWords(t, "legacy:\n  ids: [a]\n  pluginIds: [b]\n", nil)
	assert.Contains(t, strings.Join(l, "\n"), "legacy has both pluginIds and its old spelling ids")
}

// TestMaxAgentStepsIconCore: the reference's maxAgentSteps, icon and core
// are front-matter keys of the parsed plugin.
func TestMaxAgentStepsIconCore(t *testing.T) {
	p, l := parseWords(t, "icon: mic\nmaxAgentSteps: 12\ncore: true\n", nil)
	assert.Empty(t, l)
	assert.Equal(t, 12, p.MaxAgentSteps)
	assert.Equal(t, "mic", p.Icon)
	assert.True(t, p.Core)
	assert.Equal(t, 8, p.KeyPos["core"].Line)
	for front, msg := range map[string]string{
		"maxAgentSteps: 0\n":   "PLUGIN.md:6:16: maxAgentSteps must be between 1 and 100",
		"maxAgentSteps: 101\n": "PLUGIN.md:6:16: maxAgentSteps must be between 1 and 100",
		"maxAgentSteps: x\n":   "PLUGIN.md:6:16: maxAgentSteps must be an integer",
		"core: yes\n":          "PLUGIN.md:6:7: core must be",
	} {
		_, l := parseWords(t, front, nil)
		assert.Contains(t, strings.Join(l, "\n"), msg, front)
	}
}

// TestToolTitleWarning: a tool without a title still loads, with a warning
// at the tool; people see its name.
func TestToolTitleWarning(t *testing.T) {
	untitled := strings.TrimPrefix(wordsTool, "title: 人数\n")
	p, l := parseWords(t, "", map[string]string{"crowd": untitled})
	assert.Equal(t, []string{"tools/crowd.yaml:1:1: warning: tool crowd has no title: the reference requires one; people see the name instead"}, l)
	require.Len(t, p.Tools, 1)
	assert.Equal(t, "crowd", p.Tools[0].Title)

	_, l = parseWords(t, "", map[string]string{"crowd": wordsTool})
	assert.Empty(t, l)
}

// TestToolDefKeys: a tool written with every boolean key of the
// reference's ToolDef loads. grant is kept on the tool; onDemand and
// dayScoped, which mean nothing in a document, are read with a warning
// at their key (today they were unknown keys, an error).
func TestToolDefKeys(t *testing.T) {
	tool := "title: 提醒\ndescription: Remind.\neffect: write\nuntrusted: false\nuserOnly: false\nonDemand: true\ngrant: true\nalwaysAsk: false\nserial: true\ndayScoped: true\nsteps:\n  - return: '1'\n"
	p, l := parseWords(t, "", map[string]string{"remind": tool})
	require.NotNil(t, p)
	require.Len(t, p.Tools, 1)
	assert.True(t, p.Tools[0].Grant)
	assert.True(t, p.Tools[0].Serial)
	assert.Equal(t, []string{
		"tools/remind.yaml:6:11: warning: onDemand is a key of the reference's bundled tools: a plugin document reads it and nothing follows from it",
		"tools/remind.yaml:10:12: warning: dayScoped is a key of the reference's bundled tools: a plugin document reads it and nothing follows from it",
	}, l)
	_, l = parseWords(t, "", map[string]string{"remind": strings.Replace(tool, "grant: true", "grant: yes please", 1)})
	assert.Contains(t, strings.Join(l, "\n"), "tools/remind.yaml:7:8:", "grant is a boolean, checked at its value")
}
