package manifest_test

import (
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// TestByteOrderMark: a PLUGIN.md or a tool file saved with a byte-order
// mark (as some editors do) reads as the same document without it, with
// the same positions.
func TestByteOrderMark(t *testing.T) {
	plugin := "---\nid: bom\nname: B\ndescription: d\nversion: 1.0.0\n---\nx\n"
	tool := "description: t\neffect: read\nsteps:\n  - return: '1'\n"
	for _, files := range []manifest.Files{
		{"PLUGIN.md": []byte("\ufeff" + plugin), "tools/t.yaml": []byte(tool)},
		{"PLUGIN.md": []byte(plugin), "tools/t.yaml": []byte("\ufeff" + tool)},
		{"PLUGIN.md": []byte("\ufeff---\r\nid: bom\r\nname: B\r\ndescription: d\r\nversion: 1.0.0\r\n---\r\nx\r\n"), "tools/t.yaml": []byte(tool)},
	} {
		p, l := manifest.Parse(files)
		require.False(t, l.HasErrors(), l.Error())
		require.Equal(t, "bom", p.ID)
		require.Len(t, p.Tools, 1)
	}
	_, l := manifest.Parse(manifest.Files{"PLUGIN.md": []byte("\ufeff---\nid: Bom\nname: B\ndescription: d\nversion: 1.0.0\n---\nx\n")})
	require.Contains(t, l.Error(), "PLUGIN.md:2:5: id \"Bom\" must match")
}
