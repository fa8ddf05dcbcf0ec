package plugintest

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// UpdateGolden rewrites generated files and the want sections of
// testdata/format/*.txtar (go test ./plugintest -update).
var UpdateGolden = flag.Bool("update", false, "rewrite docs/schema/test.schema.json and testdata/format/*.txtar")

const testSchemaPath = "../docs/schema/test.schema.json"

func testSchema(t *testing.T) (map[string]any, *jsonschema.Schema) {
	t.Helper()
	b, err := os.ReadFile(testSchemaPath)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("test.schema.json", doc))
	s, err := c.Compile("test.schema.json")
	require.NoError(t, err)
	return doc, s
}

// TestSchemaFileCurrent: docs/schema/test.schema.json is what the test
// format's declarations generate (go test ./plugintest -run
// TestSchemaFileCurrent -update rewrites it).
func TestSchemaFileCurrent(t *testing.T) {
	b, err := yamlx.EncodeSchema(TestSchema())
	require.NoError(t, err)
	require.NoError(t, yamlx.CheckFile(testSchemaPath, b, *UpdateGolden, "go test ./plugintest -run TestSchemaFileCurrent -update"))
	doc, _ := testSchema(t)
	refused := doc["$defs"].(map[string]any)["case"].(map[string]any)["properties"].(map[string]any)["expect"].(map[string]any)["properties"].(map[string]any)["refused"].(map[string]any)
	var got []string
	for _, r := range refused["enum"].([]any) {
		got = append(got, r.(string))
	}
	assert.Equal(t, refusals, got)
	assert.NotEmpty(t, refused["description"])
}

// Every official test file (tests/*.yaml and fenced test blocks) fits the
// schema.
func TestSchemaAcceptsOfficialTests(t *testing.T) {
	_, s := testSchema(t)
	all, err := official.Files()
	require.NoError(t, err)
	n := 0
	for id, files := range all {
		p, l := manifest.Parse(files)
		require.False(t, l.HasErrors(), "%s: %v", id, l.Error())
		_, l = Parse(p)
		require.False(t, l.HasErrors(), "%s: %v", id, l.Error())
		for _, b := range p.Tests {
			n++
			assert.NoError(t, s.Validate(yamlJSON(t, b.Doc.Src)), "%s test %s", id, b.Name)
		}
	}
	assert.GreaterOrEqual(t, n, len(official.Names))
}

// The schema refuses what the parser refuses, where a schema can tell.
func TestSchemaRefusesBadTests(t *testing.T) {
	_, s := testSchema(t)
	for _, text := range []string{
		`{}`,
		`{cases: []}`,
		`{trust: root, cases: [{tool: a, expect: {output: 1}}]}`,
		`{case: [{tool: a, expect: {output: 1}}]}`,
		`{cases: [{expect: {output: 1}}]}`,
		`{cases: [{tool: a}]}`,
		`{cases: [{tool: a, expect: {}}]}`,
		`{cases: [{tool: a, actor: robot, expect: {output: 1}}]}`,
		`{cases: [{tool: a, expect: {output: 1, error: x}}]}`,
		`{cases: [{tool: a, expect: {refused: nope}}]}`,
		`{cases: [{tool: a, expect: {error: x, refused: any}}]}`,
		`{cases: [{tool: a, expect: {status: Login}}]}`,
		`{cases: [{tool: a, expect: {jq: [{equals: 1}]}}]}`,
		`{cases: [{tool: a, expect: {jq: []}}]}`,
		`{cases: [{tool: a, expect: {kv: {}}}]}`,
		`{cases: [{tool: a, expect: {output: 1}, exchanges: [{request: {path: /a}}]}]}`,
		`{cases: [{tool: a, expect: {output: 1}, exchanges: [{request: {path: "/a?b=1"}, response: {}}]}]}`,
		`{cases: [{tool: a, expect: {output: 1}, exchanges: [{request: {path: /a, query: {p: []}}, response: {}}]}]}`,
		`{cases: [{tool: a, expect: {output: 1}, exchanges: [{request: {path: /a, query: {p: [[1]]}}, response: {}}]}]}`,
		`{cases: [{tool: a, expect: {output: 1}, exchanges: [{request: {path: /a, query: {p: {q: 1}}}, response: {}}]}]}`,
		`{cases: [{tool: a, expect: {output: 1}, exchanges: [{request: {path: /a, form: {p: [null]}}, response: {}}]}]}`,
		`{cases: [{tool: a, expect: {output: 1}, exchanges: [{request: {path: /a}, response: {status: 99}}]}]}`,
		`{cases: [{tool: a, expect: {output: 1}, exchanges: [{request: {path: /a}, response: {json: 1, body: x}}]}]}`,
		`{secrets: {card: {cookies: {a: "ab"}}}, cases: [{tool: a, expect: {output: 1}}]}`,
		`{secrets: {card: {token: "abcdef"}}, cases: [{tool: a, expect: {output: 1}}]}`,
	} {
		assert.Error(t, s.Validate(yamlJSON(t, []byte(text))), text)
	}
	ok := `{trust: official, secrets: {card: {cookies: {a: "abcd"}}}, cases: [{name: n, tool: a, input: {x: 1}, actor: agent,
  approve: false, exchanges: [{request: {service: card, method: POST, path: /a, query: {p: 1, q: x, r: [1, b]}, form: {f: true, g: [x, x]}, session: true},
  response: {status: 302, headers: {Location: /login}, body: "<p>", charset: gbk}, repeat: true}],
  expect: {status: login_required, jq: [.ok, {expr: .n, equals: 2}], kv: {k: null}}}]}`
	assert.NoError(t, s.Validate(yamlJSON(t, []byte(ok))))
}

// yamlJSON decodes YAML to JSON data, as an editor does.
func yamlJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal(b, &v))
	j, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(j, &out))
	return out
}
