package registry_test

import (
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolDescriptionsAreNeverTranslated: the catalogue in English takes
// the plugin's English name and description and the tools' English titles,
// and keeps each tool's own description (the reference: "it is never
// translated"); an i18n description of a tool is ignored with a warning.
func TestToolDescriptionsAreNeverTranslated(t *testing.T) {
	front := "i18n:\n  en:\n    name: Tests\n    description: The English one.\n    tools:\n      read: {title: Reading, description: \"An English description.\"}\n"
	files := docFiles("tr", front, map[string]string{"read": toolYAML("read", "title: 读取")})
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), l.Error())
	assert.Contains(t, l.Error(), "PLUGIN.md:11:30: warning: i18n.en.tools.read.description is ignored: a tool's description is never translated")

	r := registry.New()
	mustAdd(t, r, files, registry.Official, registry.DocOptions{})
	require.NotNil(t, p)
	en, err := r.Catalogue(registry.CatalogueOptions{Lang: "en"})
	require.NoError(t, err)
	require.Len(t, en.Plugins, 1)
	assert.Equal(t, "Tests", en.Plugins[0].Name)
	assert.Equal(t, "The English one.", en.Plugins[0].Description)
	require.Len(t, en.Plugins[0].Tools, 1)
	assert.Equal(t, "Reading", en.Plugins[0].Tools[0].Title)
	assert.Equal(t, "A read tool.", en.Plugins[0].Tools[0].Description)
}
