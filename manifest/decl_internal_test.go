package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tool file's keys in docs/schema/tool.schema.json are the declared
// ones (until that file's top level is generated from toolDecl too).
func TestToolSchemaHasTheDeclaredKeys(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "schema", "tool.schema.json"))
	require.NoError(t, err)
	var doc struct{ Properties map[string]any }
	require.NoError(t, json.Unmarshal(b, &doc))
	var got []string
	for k := range doc.Properties {
		got = append(got, k)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(toolDecl.Keys()))
	require.Equal(t, want, got)
}
