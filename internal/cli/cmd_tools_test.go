package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/registry"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// installLocal stores a document folder in a home, as install would.
func installLocal(t *testing.T, home, dir, trust string) string {
	t.Helper()
	files, err := manifest.ReadDir(dir)
	require.NoError(t, err)
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), l.Error())
	s, err := fetch.OpenStore(home)
	require.NoError(t, err)
	abs, _ := filepath.Abs(dir)
	require.NoError(t, s.Install(context.Background(), fetch.Entry{ID: p.ID, Name: p.Name, Version: p.Version,
		Link: abs, Kind: fetch.KindLocal, Trust: trust, Enabled: true}, files, false))
	return p.ID
}

func TestToolsJSONValidatesAgainstTheMetaSchema(t *testing.T) {
	home := t.TempDir()
	installLocal(t, home, skeletonPath(), "community")
	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "tools", "--json")
	require.Equal(t, 0, code, errs)

	var cat struct {
		Plugins []struct {
			ID, Trust, Instructions string
			Tools                   []struct {
				Name, ID, Description, Effect string
				InputSchema                   json.RawMessage
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cat))
	meta, err := jsonschema.NewCompiler().Compile(registry.SchemaDraft)
	require.NoError(t, err)
	seen := map[string]bool{}
	n := 0
	for _, p := range cat.Plugins {
		seen[p.ID] = true
		if p.ID == "classrooms-example" {
			assert.Equal(t, "community", p.Trust)
		}
		assert.NotEmpty(t, p.Instructions, p.ID)
		for _, tl := range p.Tools {
			n++
			assert.True(t, strings.HasPrefix(tl.Name, p.ID+"__"), tl.Name)
			assert.NotEmpty(t, tl.Description)
			assert.Contains(t, []string{"read", "write", "money", "public"}, tl.Effect)
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(tl.InputSchema)))
			require.NoError(t, err)
			require.NoError(t, meta.Validate(v), "%s: the input schema is not a valid draft 2020-12 schema", tl.Name)
			// self-contained: it compiles with every outside reference refused
			var m map[string]any
			require.NoError(t, json.Unmarshal(tl.InputSchema, &m))
			assert.Equal(t, registry.SchemaDraft, m["$schema"])
			_, err = manifest.CompileSchema(m)
			require.NoError(t, err, tl.Name)
		}
	}
	assert.True(t, seen["classrooms-example"], "the installed document")
	assert.True(t, seen["settings"], "the settings tools")
	for _, id := range official.Names {
		assert.True(t, seen[id], "the bundled document %s", id)
	}
	assert.Greater(t, n, len(official.Names))
}

func TestToolsFormats(t *testing.T) {
	home := t.TempDir()
	installLocal(t, home, skeletonPath(), "community")
	env := map[string]string{"HARNESS_HOME": home}

	code, out, errs := runCLI(t, env, "tools", "--format", "openai")
	require.Equal(t, 0, code, errs)
	var oa []registry.OpenAITool
	require.NoError(t, json.Unmarshal([]byte(out), &oa))
	var found bool
	for _, x := range oa {
		assert.Equal(t, "function", x.Type)
		if x.Function.Name == "classrooms-example__free" {
			found = true
			assert.Equal(t, "object", x.Function.Parameters["type"])
			assert.Contains(t, x.Function.Parameters["required"], "building")
		}
	}
	assert.True(t, found)

	code, out, errs = runCLI(t, env, "tools", "--format", "anthropic")
	require.Equal(t, 0, code, errs)
	var an []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &an))
	assert.Len(t, an, len(oa))
	assert.Contains(t, an[0], "input_schema")

	code, out, errs = runCLI(t, env, "tools")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "classrooms-example__free")
	assert.Contains(t, out, "community")

	// a host without a campus session hides the documents that need one
	code, out, errs = runCLI(t, env, "tools", "--json", "--capabilities", "network")
	require.Equal(t, 0, code, errs)
	var cat registry.Catalogue
	require.NoError(t, json.Unmarshal([]byte(out), &cat))
	assert.NotContains(t, out, `"name": "classrooms-example__free"`)
	var hidden bool
	for _, h := range cat.Hidden {
		if h.ID == "classrooms-example" {
			hidden = true
			assert.Equal(t, registry.ReasonUnavailable, h.Reason)
			assert.Contains(t, h.Message, "campus-session")
		}
	}
	assert.True(t, hidden)

	code, _, errs = runCLI(t, env, "tools", "--format", "yaml")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errs, "--format")
	code, _, _ = runCLI(t, env, "tools", "--json", "--format", "openai")
	assert.Equal(t, ExitUsage, code)
}
