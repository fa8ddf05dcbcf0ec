package manifest_test

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// TestLintSchemaBombIsBounded: a data source's and a command's fixed input
// are checked against the tool's schema at lint. A schema whose anyOf
// branches refer back to it, with a 10-deep fixed input, made that check
// exponential (it reached 4.9 GB); the input is refused for the
// cost of checking it, and an honest input to the same schema still fits.
func TestLintSchemaBombIsBounded(t *testing.T) {
	deep := strings.Repeat("[", 10) + "x" + strings.Repeat("]", 10)
	branches := strings.Repeat("{type: array, items: {$ref: '#/$defs/n'}}, ", 8)
	tool := "description: Deep.\neffect: read\ninput:\n  type: object\n  properties:\n    a: { $ref: '#/$defs/n' }\n  $defs:\n    n: { anyOf: [ " + branches + "{type: number} ] }\nsteps:\n  - return: '1'\n"
	doc := func(input string) manifest.Files {
		return manifest.Files{
			"PLUGIN.md": []byte("---\nid: bomb\nname: B\ndescription: d\nversion: 1.0.0\ndataSources:\n  - {name: ds, tool: deep, input: {a: " + input + "}}\n" +
				"contributes:\n  commands:\n    - {key: go, title: Go, tool: deep, input: {a: " + input + "}}\n---\nI.\n"),
			"tools/deep.yaml": []byte(tool),
		}
	}
	_, l := manifest.Parse(doc(deep))
	require.True(t, l.HasErrors())
	require.Contains(t, l.Error(), `data source "ds", tool "deep": checking the input against the tool's schema would take more than`)
	require.Contains(t, l.Error(), `command "go", tool "deep": checking the input`)

	_, l = manifest.Parse(doc("[[1], [2, 3]]"))
	require.False(t, l.HasErrors(), l.Error())
}
