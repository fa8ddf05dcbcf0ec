package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

var proxySchemas = map[string]func() map[string]any{
	"services.schema.json": ServicesSchema,
	"secrets.schema.json":  SecretsSchema,
}

// TestSchemaFilesCurrent: docs/schema/services.schema.json and
// secrets.schema.json are what the declarations generate (go test ./proxy
// -run TestSchemaFilesCurrent -update rewrites them).
func TestSchemaFilesCurrent(t *testing.T) {
	for name, gen := range proxySchemas {
		b, err := yamlx.EncodeSchema(gen())
		require.NoError(t, err)
		assert.NoError(t, yamlx.CheckFile(filepath.Join("..", "docs", "schema", name), b, *updateLoaders,
			"go test ./proxy -run TestSchemaFilesCurrent -update"))
	}
}

func compileProxySchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "schema", name))
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(b, &doc))
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource(name, doc))
	s, err := c.Compile(name)
	require.NoError(t, err)
	return s
}

// The services and secrets examples of docs/proxy.md load, and fit the
// generated schemas; what the loaders refuse for its shape, the schemas
// refuse too.
func TestProxySchemasFitTheLoaders(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "proxy.md"))
	require.NoError(t, err)
	block := func(after string) string {
		m := regexp.MustCompile("(?s)" + regexp.QuoteMeta(after) + ".*?```yaml\n(.*?)```").FindSubmatch(doc)
		require.NotNil(t, m, after)
		return string(m[1])
	}
	services, secrets := compileProxySchema(t, "services.schema.json"), compileProxySchema(t, "secrets.schema.json")
	svc := block("### The services file")
	_, err = LoadServices(writeFile(t, "services.yaml", svc, 0o600))
	require.NoError(t, err)
	assert.NoError(t, services.Validate(yamlData(t, svc)))
	sec := block("### The secrets file")
	_, err = LoadSecrets(writeFile(t, "secrets.yaml", sec, 0o600))
	require.NoError(t, err)
	assert.NoError(t, secrets.Validate(yamlData(t, sec)))
	for _, text := range []string{
		"card: {auth: {cookies: [a]}}",
		"card: {origin: https://a.example, oigin: x}",
		"Card: {origin: https://a.example}",
		"card: {origin: https://a.example, concurrency: 65}",
		"card: {origin: https://a.example, login: {status: [99]}}",
		"card: {origin: https://a.example, login: {json: {code: [[1]]}}}",
		"card: {origin: https://a.example, headers: [a]}",
	} {
		_, err := LoadServices(writeFile(t, "services.yaml", text, 0o600))
		require.Error(t, err, text)
		assert.Error(t, services.Validate(yamlData(t, text)), text)
	}
	for _, text := range []string{
		"card: {cookie: {a: value-1}}",
		"card: {cookies: {a: abc}}",
		"card: {cookies: {a: \" value-1\"}}",
		"card: {headers: {a: 12345}}",
		"Card: {cookies: {a: value-1}}",
	} {
		_, err := LoadSecrets(writeFile(t, "secrets.yaml", text, 0o600))
		require.Error(t, err, text)
		assert.Error(t, secrets.Validate(yamlData(t, text)), text)
	}
}

// yamlData decodes YAML to JSON data, as an editor does.
func yamlData(t *testing.T, text string) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal([]byte(text), &v))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
