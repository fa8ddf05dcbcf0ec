package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// TestSchemaMessagesBounded: a schema library message that names every
// "$ref" of a long chain (30 KB for 3,000 links) is cut in diagnostics.
func TestSchemaMessagesBounded(t *testing.T) {
	var defs strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&defs, "    d%d: {$ref: '#/$defs/d%d'}\n", i, i+1)
	}
	defs.WriteString("    d3000: {$ref: '#/$defs/d0'}\n")
	files := manifest.Files{
		"PLUGIN.md":    []byte("---\nid: refs\nname: R\ndescription: d\nversion: 1.0.0\ndataSources:\n  - {name: ds, tool: t, input: {a: 1}}\n---\nhi\n"),
		"tools/t.yaml": []byte("description: t\neffect: read\ninput:\n  type: object\n  properties:\n    a: {$ref: '#/$defs/d0'}\n  $defs:\n" + defs.String() + "steps:\n  - return: '1'\n"),
	}
	_, l := manifest.Parse(files)
	require.True(t, l.HasErrors())
	for _, d := range l.Items {
		require.Less(t, len(d.Msg), 1000, d.Msg[:min(200, len(d.Msg))])
	}
	// A chain of 3001 references is a cycle: the input is refused for the
	// cost of checking it, before any check runs.
	require.Contains(t, l.Error(), `data source "ds", tool "t": checking the input against the tool's schema would take more than`)
}
