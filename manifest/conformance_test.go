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

// TestFilesNeverSilentlyIgnored: a tool, widget or test file the engine
// would not read (in a subfolder, or under an extension it does not take)
// is an error, and so is a block whose info string misspells its kind: a
// document's test cases never stop running without a word.
func TestFilesNeverSilentlyIgnored(t *testing.T) {
	plugin := "---\nid: files\nname: F\ndescription: d\nversion: 1.0.0\n---\nx\n"
	tool := "description: t\neffect: read\nsteps:\n  - return: '1'\n"
	cases := "cases:\n  - tool: t\n    expect: {output: 2}\n"
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"test in a subfolder":   {map[string]string{"tests/sub/a.yaml": cases}, "tests/sub/a.yaml:1:1: tests/ holds only NAME.yaml files"},
		"test in upper case":    {map[string]string{"tests/a.YAML": cases}, "tests/a.YAML:1:1: tests/ holds only NAME.yaml files"},
		"tool in a subfolder":   {map[string]string{"tools/sub/u.yaml": tool}, "tools/sub/u.yaml:1:1: tools/ holds only NAME.yaml files"},
		"widget in a subfolder": {map[string]string{"widgets/sub/w.json": "{}"}, "widgets/sub/w.json:1:1: widgets/ holds only NAME.json files"},
		"tests block":           {map[string]string{"PLUGIN.md": plugin + "\n```yaml tests a\n" + cases + "```\n"}, "PLUGIN.md:9:1: a \"yaml tests a\" block is not read: a test block's info string is \"yaml test NAME\""},
		"Tool block":            {map[string]string{"PLUGIN.md": plugin + "\n```yaml Tool u\n" + tool + "```\n"}, "PLUGIN.md:9:1: a \"yaml Tool u\" block is not read: a tool block's info string is \"yaml tool NAME\""},
	} {
		t.Run(name, func(t *testing.T) {
			files := manifest.Files{"PLUGIN.md": []byte(plugin), "tools/t.yaml": []byte(tool)}
			for n, text := range tc.files {
				files[n] = []byte(text)
			}
			_, l := manifest.Parse(files)
			require.True(t, l.HasErrors(), "nothing reported")
			require.Contains(t, l.Error(), tc.want)
		})
	}
	// Files beside the tests that are not YAML stay allowed, with a warning.
	_, l := manifest.Parse(manifest.Files{"PLUGIN.md": []byte(plugin), "tools/t.yaml": []byte(tool), "tests/README.md": []byte("notes")})
	require.False(t, l.HasErrors(), l.Error())
	require.Contains(t, l.Error(), "tests/README.md:1:1: warning: ")
}
