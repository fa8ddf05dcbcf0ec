package registry_test

import (
	"encoding/json"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/registry"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metaValidate checks a schema against the draft 2020-12 meta-schema and
// compiles it with every outside reference refused.
func metaValidate(t *testing.T, name string, schema map[string]any) {
	t.Helper()
	meta, err := jsonschema.NewCompiler().Compile(registry.SchemaDraft)
	require.NoError(t, err)
	// through JSON, as a consumer of the catalogue reads it
	b, err := json.Marshal(schema)
	require.NoError(t, err)
	v, err := jsonschema.UnmarshalJSON(bytesReader(b))
	require.NoError(t, err)
	require.NoError(t, meta.Validate(v), name)
	assert.Equal(t, registry.SchemaDraft, schema["$schema"], name)
	_, err = manifest.CompileSchema(schema)
	require.NoError(t, err, "%s is self-contained", name)
}

func TestCatalogueOfficial(t *testing.T) {
	all, err := official.Files()
	require.NoError(t, err)
	r := registry.New(registry.WithCapabilities(manifest.KnownRequires...))
	for _, id := range official.Names {
		mustAdd(t, r, all[id], registry.Official, registry.DocOptions{Origin: registry.Bundled})
	}
	cat, err := r.Catalogue(registry.CatalogueOptions{})
	require.NoError(t, err)
	require.Len(t, cat.Plugins, len(official.Names))
	n := 0
	for _, p := range cat.Plugins {
		assert.NotEmpty(t, p.Instructions, p.ID)
		for _, ct := range p.Tools {
			n++
			assert.Equal(t, manifest.ModelName(p.ID, ct.ID[len(p.ID)+1:]), ct.Name)
			assert.NotEmpty(t, ct.Description)
			metaValidate(t, ct.Name, ct.InputSchema)
			tl, ok := r.Lookup(ct.Name)
			require.True(t, ok)
			assert.False(t, tl.UserOnly, "userOnly tools are left out")
		}
	}
	assert.Greater(t, n, 7)
	assert.Len(t, cat.OpenAI(), n)
	assert.Len(t, cat.Anthropic(), n)

	// English titles and descriptions where the documents have them
	en, err := r.Catalogue(registry.CatalogueOptions{Lang: "en"})
	require.NoError(t, err)
	assert.Len(t, en.Tools(), n)
}

func TestCatalogueHidesAndExports(t *testing.T) {
	r := registry.New(registry.WithCapabilities("campus-session"))
	mustAdd(t, r, docFiles("a", "", map[string]string{
		"look":  toolYAML("read"),
		"mine":  toolYAML("read", "userOnly: true"),
		"post":  toolYAML("public"),
		"check": toolYAML("read", "alwaysAsk: true"),
	}), registry.Community, registry.DocOptions{})
	mustAdd(t, r, docFiles("gps", "requires: [location]\n", map[string]string{"where": toolYAML("read")}), registry.Official, registry.DocOptions{})
	mustAdd(t, r, docFiles("off", "", map[string]string{"look": toolYAML("read")}), registry.Official, registry.DocOptions{})
	mustAdd(t, r, docFiles("quiet", "", map[string]string{"look": toolYAML("read")}), registry.Official, registry.DocOptions{})
	require.NoError(t, r.SetEnabled("quiet", false))
	require.NoError(t, r.SetMode("a", manifest.Public, manifest.Off))

	cat, err := r.Catalogue(registry.CatalogueOptions{})
	require.NoError(t, err)
	var names []string
	for _, ct := range cat.Tools() {
		names = append(names, ct.Name)
	}
	assert.Equal(t, []string{"a__check", "a__look", "off__look"}, names)
	assert.Equal(t, []registry.Hidden{
		{ID: "a.mine", Reason: registry.ReasonUserOnly, Message: "for the user only"},
		{ID: "a.post", Reason: registry.ReasonModeOff, Message: "public tools are off"},
		{ID: "gps", Reason: registry.ReasonUnavailable, Message: "this device lacks location"},
		{ID: "quiet", Reason: registry.ReasonDisabled, Message: "the user turned it off"},
	}, cat.Hidden)
	tools := cat.Tools()
	assert.Equal(t, manifest.Ask, tools[0].Mode, "alwaysAsk shows as ask")
	assert.True(t, tools[1].Untrusted, "community results are untrusted")
	assert.False(t, tools[2].Untrusted)

	b, err := registry.MarshalIndent(cat.OpenAI())
	require.NoError(t, err)
	var oa []map[string]any
	require.NoError(t, json.Unmarshal(b, &oa))
	assert.Equal(t, "function", oa[0]["type"])
	fn := oa[0]["function"].(map[string]any)
	assert.Equal(t, "a__check", fn["name"])
	assert.Equal(t, "A read tool.", fn["description"])
	params := fn["parameters"].(map[string]any)
	assert.Equal(t, "object", params["type"])
	assert.NotContains(t, params, "$schema")

	b, err = registry.MarshalIndent(cat.Anthropic())
	require.NoError(t, err)
	var an []map[string]any
	require.NoError(t, json.Unmarshal(b, &an))
	assert.Equal(t, []string{"description", "input_schema", "name"}, keys(an[1]))
	assert.Equal(t, "a__look", an[1]["name"])

	// the catalogue's schema is a copy: changing it leaves the tool alone
	tools[1].InputSchema["type"] = "string"
	tl, _ := r.Lookup("a.look")
	assert.Equal(t, "object", tl.Input["type"])
}
