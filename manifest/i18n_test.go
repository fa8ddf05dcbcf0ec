package manifest_test

import (
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestI18nFullStructure: i18n.en reads every section of the reference's
// PluginTranslation (name, description, tools, widgets, screens, settings,
// preferences with options, commands, dataSources, scopes) into the
// plugin, and the old plain-string widgets and preferences as {title}.
func TestI18nFullStructure(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/lint/i18n.txtar")
	require.NoError(t, err)
	files := manifest.Files{}
	for _, f := range ar.Files {
		if f.Name != "want" {
			files[f.Name] = f.Data
		}
	}
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), l.Error())
	en := p.I18n["en"]
	assert.Equal(t, map[string]manifest.I18nText{"card": {Title: "Card"}, "crad": {Title: "x"}}, en.Widgets)
	assert.Equal(t, manifest.I18nText{Title: "Main"}, en.Screens["main"])
	assert.Equal(t, manifest.I18nText{Title: "Style", Subtitle: "How cards look"}, en.Settings["styleRow"])
	assert.Equal(t, manifest.I18nText{Title: "Style", Options: map[string]string{"compact": "Compact"}}, en.Preferences["style"],
		"an option the preference lacks is left out")
	assert.Equal(t, manifest.I18nText{Title: "Colour"}, en.Preferences["colour"])
	assert.Equal(t, manifest.I18nText{Description: "Check", ArgHint: "when", Aliases: []string{"c"}, Prompt: "Check it"}, en.Commands["check"])
	assert.Equal(t, manifest.I18nText{Title: "Balance"}, en.DataSources["balance"])
	assert.Equal(t, map[string]string{"card": "Campus card", "https://news.example.edu.cn": "News", "portal": "x"}, en.Scopes)
}
