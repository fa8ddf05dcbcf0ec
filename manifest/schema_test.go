package manifest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
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

// TestPluginSchemaCurrent: docs/schema/plugin.schema.json is what the front
// matter's declarations generate (go test ./manifest -update rewrites it).
func TestPluginSchemaCurrent(t *testing.T) {
	b, err := yamlx.EncodeSchema(manifest.PluginSchema())
	require.NoError(t, err)
	require.NoError(t, yamlx.CheckFile(filepath.Join("..", "docs", "schema", "plugin.schema.json"), b, *update,
		"go test ./manifest -run TestPluginSchemaCurrent -update"))
}

// Every key of the generated schemas of the front matter, test, services
// and secrets files says what it is: hovering it in an editor explains it.
func TestSchemasDescribeEveryKey(t *testing.T) {
	for file, min := range map[string]int{"plugin.schema.json": 50, "test.schema.json": 30, "services.schema.json": 15, "secrets.schema.json": 2} {
		doc, _ := loadSchema(t, file)
		assert.NotEmpty(t, doc["title"], file)
		assert.NotEmpty(t, doc["description"], file)
		assert.GreaterOrEqual(t, describedKeys(t, file, doc), min, file)
	}
}

// describedKeys walks a schema's properties, asserting each has a
// description, and counts them.
func describedKeys(t *testing.T, file string, doc map[string]any) int {
	n := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for k, p := range props {
				n++
				pm := p.(map[string]any)
				assert.NotEmpty(t, pm["description"], "%s: %s.%s has no description", file, path, k)
				walk(path+"."+k, p)
			}
		}
		for _, k := range []string{"items", "additionalProperties"} {
			walk(path, m[k])
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			for _, x := range asSlice(m[k]) {
				walk(path, x)
			}
		}
		if defs, ok := m["$defs"].(map[string]any); ok {
			for k, d := range defs {
				walk("$defs."+k, d)
			}
		}
	}
	walk("", doc)
	return n
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// TestSchemasAcceptEveryDocument validates the front matter and tool files
// of every valid document in the repository (the official documents, the
// skeleton, the hostile documents, and every txtar case whose document
// parses) against the generated schemas, with the library the engine uses.
func TestSchemasAcceptEveryDocument(t *testing.T) {
	_, ps := loadSchema(t, "plugin.schema.json")
	_, ts := loadSchema(t, "tool.schema.json")
	docs := map[string]manifest.Files{}
	root := filepath.Join("..")
	require.NoError(t, filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() && strings.HasPrefix(e.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		switch {
		case e.Name() == "PLUGIN.md":
			files, err := manifest.ReadDir(filepath.Dir(path))
			require.NoError(t, err, path)
			docs[filepath.Dir(path)] = files
		case strings.HasSuffix(path, ".txtar") && strings.Contains(path, "testdata"):
			ar, err := txtar.ParseFile(path)
			require.NoError(t, err)
			// A case's document is at its root, or under old/ and new/
			// (a review diff).
			for _, dir := range []string{"", "old/", "new/"} {
				files := manifest.Files{}
				for _, f := range ar.Files {
					if name, ok := strings.CutPrefix(f.Name, dir); ok {
						files[name] = f.Data
					}
				}
				if _, ok := files["PLUGIN.md"]; ok {
					docs[path+":"+dir] = files
				}
			}
		}
		return nil
	}))
	valid, tools := 0, 0
	for name, files := range docs {
		p, l := manifest.Parse(files)
		if l.HasErrors() {
			continue
		}
		if _, l := interpreter.Compile(p); l.HasErrors() {
			continue // a step case with a bad step
		}
		valid++
		require.NoError(t, ps.Validate(frontMatter(t, files["PLUGIN.md"])), name)
		for _, tl := range p.Tools {
			tools++
			require.NoError(t, ts.Validate(toJSON(t, tl.Doc.Src)), "%s %s", name, tl.Name)
		}
	}
	assert.GreaterOrEqual(t, valid, 15)
	assert.GreaterOrEqual(t, tools, 25)
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
