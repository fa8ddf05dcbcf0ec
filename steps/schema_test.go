package steps_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/limits"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/steps"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

var toolSchemaPath = filepath.Join("..", "docs", "schema", "tool.schema.json")

// TestToolSchemaUpToDate: docs/schema/tool.schema.json is what the
// declarations of the tool file, the steps and the limits generate (go test
// ./steps -run TestToolSchemaUpToDate -update rewrites it).
func TestToolSchemaUpToDate(t *testing.T) {
	b, err := yamlx.EncodeSchema(steps.ToolSchema(steps.Builtin()))
	require.NoError(t, err)
	require.NoError(t, yamlx.CheckFile(toolSchemaPath, b, *update, "go test ./steps -run TestToolSchemaUpToDate -update"))
	defs, err := steps.JSONSchema(steps.Builtin())
	require.NoError(t, err)
	doc := readJSON(t, toolSchemaPath).(map[string]any)
	for name := range defs {
		assert.Contains(t, doc["$defs"], name)
	}
}

// TestSchemasAreValid checks every schema under docs/schema against the
// draft 2020-12 meta-schema.
func TestSchemasAreValid(t *testing.T) {
	c := jsonschema.NewCompiler()
	meta, err := c.Compile("https://json-schema.org/draft/2020-12/schema")
	require.NoError(t, err)
	require.Error(t, meta.Validate(map[string]any{"type": "text"}), "the meta-schema checks")
	files, err := filepath.Glob(filepath.Join("..", "docs", "schema", "*.schema.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 3)
	for _, f := range files {
		doc := readJSON(t, f)
		require.NoError(t, meta.Validate(doc), f)
		assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc.(map[string]any)["$schema"], f)
		compileSchema(t, f)
	}
}

// The limits a tool may lower, as the schema lists them, are limits.
func TestToolSchemaLimits(t *testing.T) {
	doc := readJSON(t, toolSchemaPath).(map[string]any)
	assert.Equal(t, "#/$defs/limits", doc["properties"].(map[string]any)["limits"].(map[string]any)["$ref"])
	assert.NotEmpty(t, doc["properties"].(map[string]any)["limits"].(map[string]any)["description"])
	lim := doc["$defs"].(map[string]any)["limits"].(map[string]any)["properties"].(map[string]any)
	require.NotEmpty(t, lim)
	assert.Len(t, lim, len(limits.ToolNames()))
	fields := reflect.TypeOf(steps.Limits{})
	for name, v := range lim {
		f, ok := fields.FieldByName(strings.ToUpper(name[:1]) + name[1:])
		require.True(t, ok, "limits.%s is no limit", name)
		typ := v.(map[string]any)["type"]
		if f.Type == reflect.TypeOf(time.Duration(0)) {
			assert.Equal(t, "string", typ, name)
		} else {
			assert.Equal(t, "integer", typ, name)
		}
	}
}

// A kind describes itself through its declared types, so no kind can lack
// a schema: registration refuses one without a form, a scalar form without
// words, or a mapping declared under another name.
func TestRegisterRefusesUndescribedKinds(t *testing.T) {
	r := steps.NewRegistry()
	dec := func(*steps.Compiler, *yaml.Node) steps.Step { return nil }
	err := r.Register(steps.Spec{Kind: "odd", Summary: "odd"}, dec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `kind "odd" declares neither a scalar form nor a mapping`)
	err = r.Register(steps.Spec{Kind: "odder", Summary: "odder", Scalar: steps.JQType}, dec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `kind "odder" needs Short`)
	err = r.Register(steps.Spec{Kind: "oddest", Summary: "oddest", Decl: &yamlx.Decl{Name: "other"}}, dec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `kind "oddest" declares a mapping named "other"`)
	require.NoError(t, r.Register(steps.Spec{Kind: "fine", Summary: "fine", Short: "a jq program", Scalar: steps.JQType}, dec))
	defs, err := steps.JSONSchema(r)
	require.NoError(t, err)
	assert.Contains(t, defs, "kind.fine")
}

// Every kind's example, every step case the parser accepts and every
// official tool fit the schema.
func TestToolSchemaAcceptsValidTools(t *testing.T) {
	s := compileSchema(t, toolSchemaPath)
	for _, k := range steps.Builtin().Kinds() {
		spec, _ := steps.Builtin().Spec(k)
		tool := "description: x\neffect: read\nsteps:\n" + indent(spec.Example)
		assert.NoError(t, s.Validate(yamlJSON(t, []byte(tool))), "example of %s", k)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.txtar"))
	require.NoError(t, err)
	valid := 0
	for _, file := range files {
		c := readCase(t, file)
		p, l := manifest.Parse(caseDoc(c))
		if l.HasErrors() {
			continue
		}
		if _, l := interpreter.Compile(p); l.HasErrors() {
			continue
		}
		valid++
		assert.NoError(t, s.Validate(yamlJSON(t, []byte(c.tool))), file)
	}
	assert.Greater(t, valid, 40)
	all, err := official.Files()
	require.NoError(t, err)
	tools := 0
	for id, files := range all {
		p, l := manifest.Parse(files)
		require.False(t, l.HasErrors(), "%s: %v", id, l.Error())
		for _, tl := range p.Tools {
			tools++
			assert.NoError(t, s.Validate(yamlJSON(t, tl.Doc.Src)), "%s tool %s", id, tl.Name)
		}
	}
	assert.Greater(t, tools, 10)
}

// Every official document's front matter fits docs/schema/plugin.schema.json.
func TestPluginSchemaAcceptsOfficialDocuments(t *testing.T) {
	s := compileSchema(t, filepath.Join("..", "docs", "schema", "plugin.schema.json"))
	all, err := official.Files()
	require.NoError(t, err)
	for id, files := range all {
		text := strings.ReplaceAll(string(files["PLUGIN.md"]), "\r\n", "\n")
		require.True(t, strings.HasPrefix(text, "---\n"), id)
		fm, _, ok := strings.Cut(text[4:], "\n---\n")
		require.True(t, ok, id)
		assert.NoError(t, s.Validate(yamlJSON(t, []byte(fm+"\n"))), id)
	}
}

// The schema refuses what the parser refuses, where a schema can tell.
func TestToolSchemaRefusesBadSteps(t *testing.T) {
	s := compileSchema(t, toolSchemaPath)
	for _, step := range []string{
		`{jq: ., return: .}`,            // two kinds
		`{jq: ., as: x, iff: .}`,        // an unknown key
		`{as: x}`,                       // no kind
		`{jq: ., as: input}`,            // a reserved name
		`{jq: ., as: 1x}`,               // not a name
		`{jq: ., if: [true]}`,           // if is a jq program
		`{jq: [1]}`,                     // a jq program is text
		`{return: {a: 1}}`,              // so is return's
		`{foreach: {in: .}}`,            // foreach needs steps
		`{foreach: {in: ., steps: []}}`, // at least one step
		`{foreach: {in: ., steps: [{jq: .}], max: 0}}`,
		`{foreach: {in: ., steps: [{jq: .}], item: input}}`,
		`{foreach: {in: ., steps: [{jq: .}], each: x}}`, // an unknown field
		`{foreach: {in: ., steps: [{jq: ., return: .}]}}`,
		`{request: {service: a, path: /x, method: FETCH}}`,
		`{request: {service: a, path: /x, query: {p: [1]}}}`,
		`{request: {service: a, path: /x, query: {p: null}}}`,
		`{request: {url: "https://a/", retry: {attempts: 9}}}`,
		`{request: {url: "https://a/", retry: {backoff: soon}}}`,
		`{paginate: {request: {service: a, path: /x, verb: GET}, next: .}}`,
		`{paginate: {request: {url: "https://a/"}}}`,
		`{html: {fields: {a: b}}}`,
		`{html: {select: li, fields: {a: {select: b, text: true}}}}`,
		`{html: {select: li, fields: {a: 1}}}`,
		`{xml: {select: item, fields: {a: {all: yes}}}}`,
		`{xml: {select: "a b"}}`,
		`{xml: {select: item, fields: {a: "x//y"}}}`,
		`{regex: {pattern: a, all: "true"}}`,
		`{kv_set: {value: .}}`,
		`{kv_get: {key: a}}`,
		`{status: {message: x}}`,
		`{status: {status: Bad}}`,
		`{fail: [x]}`,
		`plain`,
	} {
		tool := "description: x\neffect: read\nsteps:\n  - " + step + "\n"
		assert.Error(t, s.Validate(yamlJSON(t, []byte(tool))), step)
	}
	many := "description: x\neffect: read\nsteps:\n" + strings.Repeat("  - jq: .\n", manifest.MaxSteps+1)
	assert.Error(t, s.Validate(yamlJSON(t, []byte(many))))
}

func indent(s string) string {
	var b strings.Builder
	for _, ln := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("  " + ln + "\n")
	}
	return b.String()
}

func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

func compileSchema(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	name := filepath.Base(path)
	require.NoError(t, c.AddResource(name, readJSON(t, path)))
	s, err := c.Compile(name)
	require.NoError(t, err)
	return s
}

// yamlJSON decodes YAML to JSON data, as an editor does.
func yamlJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal(b, &v))
	return roundTrip(t, v)
}

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	j, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(j, &out))
	return out
}
