package manifest_test

import (
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// TestInstructionsCutExactlyTheBlocks: the instructions are the body
// without the tool, widget and test blocks, fence lines included, and
// nothing else: not the text between a block and the next code block, not
// half of the next block (the closing fence was searched from the line
// after it, so every other block of a run stayed in the instructions).
func TestInstructionsCutExactlyTheBlocks(t *testing.T) {
	const front = "---\nid: cut\nname: Cut\ndescription: d\nversion: 1.0.0\n---\n"
	tool := "```yaml tool t\ndescription: t\neffect: read\nsteps:\n  - return: '1'\n```\n"
	cases := []struct{ name, body, want string }{
		{"back to back", "Intro.\n" + tool + "```json widget a\n{}\n```\n```json widget b\n{}\n```\n```json widget c\n{}\n```\nEnd.\n", "Intro.\nEnd."},
		{"text and a code block after", "Intro.\n" + tool + "Keep this.\n```python\nprint(1)\n```\n", "Intro.\nKeep this.\n```python\nprint(1)\n```"},
		{"empty block", "A\n```json widget a\n```\nB\n```sh\nx\n```\n", "A\nB\n```sh\nx\n```"},
		{"longer fence", "A\n````yaml tool t\ndescription: t\neffect: read\nsteps:\n  - return: '1'\n```\n````\nB\n", "A\nB"},
		{"in a list", "- item:\n\n  ```json widget a\n  {}\n  ```\n- next\n\n```sh\nx\n```\n", "- item:\n\n- next\n\n```sh\nx\n```"},
		{"in a quote", "> quoted\n>\n> ```json widget a\n> {}\n> ```\n\nAfter.\n", "> quoted\n>\n\nAfter."},
		{"unclosed at the end", "A\n```json widget a\n{}\n", "A"},
		{"blank lines inside", "A\n```json widget a\n\n{}\n\n\n```\nB\n", "A\nB"},
		{"tilde fence", "A\n~~~json widget a\n{}\n~~~\nB\n", "A\nB"},
		{"no final line break", "A\n```json widget a\n{}\n```", "A"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, l := manifest.Parse(manifest.Files{"PLUGIN.md": []byte(front + c.body)})
			for _, d := range l.Errors() {
				require.NotContains(t, d.Msg, "instructions", d.String())
			}
			require.Equal(t, c.want, p.Instructions)
		})
	}
}
