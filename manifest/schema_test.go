package manifest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

func loadSchema(t *testing.T, name string) (map[string]any, *jsonschema.Schema) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "schema", name))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource(name, doc))
	s, err := c.Compile(name)
	require.NoError(t, err)
	return doc, s
}

func keysOf(m any) []string {
	var out []string
	for k := range m.(map[string]any) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// TestSchemasMatchParser keeps the editors' JSON Schemas and the parser's key
// lists in step: a key added to one and not the other fails here.
func TestSchemasMatchParser(t *testing.T) {
	plugin, _ := loadSchema(t, "plugin.schema.json")
	require.Equal(t, sorted(manifest.FrontMatterKeys), keysOf(plugin["properties"]))
	access := plugin["properties"].(map[string]any)["access"].(map[string]any)
	require.Equal(t, []string{"abilities", "campus", "web"}, keysOf(access["properties"]))
	abil := access["properties"].(map[string]any)["abilities"].(map[string]any)["items"].(map[string]any)["enum"].([]any)
	var got []string
	for _, a := range abil {
		got = append(got, a.(string))
	}
	require.Equal(t, sorted(manifest.KnownAbilities), sorted(got))
	tool, _ := loadSchema(t, "tool.schema.json")
	require.Equal(t, sorted(manifest.ToolKeys), keysOf(tool["properties"]))
}

// TestSchemasAcceptValidDocuments validates every valid test document's front
// matter and tool files against the schemas.
func TestSchemasAcceptValidDocuments(t *testing.T) {
	_, ps := loadSchema(t, "plugin.schema.json")
	_, ts := loadSchema(t, "tool.schema.json")
	dirs, _ := filepath.Glob("testdata/valid/*")
	dirs = append(dirs, "../testdata/skeleton")
	for _, dir := range dirs {
		files, err := manifest.ReadDir(dir)
		require.NoError(t, err)
		p, l := manifest.Parse(files)
		require.False(t, l.HasErrors(), l.Error())
		fm := frontMatter(t, files["PLUGIN.md"])
		require.NoError(t, ps.Validate(fm), dir)
		for _, tl := range p.Tools {
			v := toJSON(t, tl.Doc.Src)
			require.NoError(t, ts.Validate(v), "%s %s", dir, tl.Name)
		}
	}
}

func frontMatter(t *testing.T, src []byte) any {
	t.Helper()
	s := string(src)
	require.True(t, len(s) > 4 && s[:4] == "---\n")
	end := 4
	for i := 4; i < len(s); i++ {
		if s[i] == '\n' && len(s) >= i+4 && s[i+1:i+4] == "---" {
			end = i + 1
			break
		}
	}
	return toJSON(t, []byte(s[4:end]))
}

// toJSON decodes YAML to JSON-compatible data (through JSON, as an editor does).
func toJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal(b, &v))
	j, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(j, &out))
	return out
}
