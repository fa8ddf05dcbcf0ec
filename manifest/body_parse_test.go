package manifest_test

import (
	"fmt"
	"strings"
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

// TestDeepMarkdownNestingRefused: the Markdown parser's work grows with the
// square of the block quotes and list items one line opens (a 1 MiB line of
// "> > > …" took minutes), so such a line is refused before it is parsed;
// thematic breaks and ordinary nesting are not.
func TestDeepMarkdownNestingRefused(t *testing.T) {
	const front = "---\nid: deep\nname: Deep\ndescription: d\nversion: 1.0.0\n---\n"
	for name, line := range map[string]string{
		"quotes":          strings.Repeat("> ", 400000) + "x",
		"quotes no space": strings.Repeat(">", 800000) + "x",
		"quotes and tabs": strings.Repeat(">\t", 400000) + "x",
		"ordered lists":   strings.Repeat("1. ", 300000) + "x",
		"mixed":           strings.Repeat("> - ", 200000) + "x",
		"just over":       strings.Repeat("- ", manifest.MaxMarkdownNesting+1) + "x",
	} {
		t.Run(name, func(t *testing.T) {
			_, l := manifest.Parse(manifest.Files{"PLUGIN.md": []byte(front + "Intro.\n" + line + "\n")})
			require.True(t, l.HasErrors())
			require.Contains(t, l.Error(), "PLUGIN.md:8:1: the line nests block quotes or list items more than 32 levels deep")
		})
	}
	for name, body := range map[string]string{
		"thematic breaks": strings.Repeat("* ", 60) + "\n\n" + strings.Repeat("- ", 60) + "\n\n" + strings.Repeat("_ ", 60) + "\n",
		"nested lists":    "- a\n  - b\n    - c\n      > quoted\n      > - d\n",
		"at the limit":    strings.Repeat("> ", manifest.MaxMarkdownNesting) + "x\n",
		"numbers":         strings.Repeat("2026. ", 3) + "x\n" + strings.Repeat("1.5 ", 50) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			p, l := manifest.Parse(manifest.Files{"PLUGIN.md": []byte(front + body)})
			require.NotContains(t, l.Error(), "levels deep")
			require.NotEmpty(t, p.Instructions)
		})
	}
}

// TestInlineMarkdownBombs: the body is parsed for its blocks only. Inline
// links, references and brackets, whose parsers take time that grows with
// the square of some inputs (a megabyte of "[a](" took minutes), are never
// parsed: such a body is only too long for the instructions.
func TestInlineMarkdownBombs(t *testing.T) {
	const front = "---\nid: inline\nname: Inline\ndescription: d\nversion: 1.0.0\n---\n"
	const n = 1000000
	var defs strings.Builder
	for i := 0; defs.Len() < n; i++ {
		fmt.Fprintf(&defs, "[a%d]: /u\n", i)
	}
	for name, body := range map[string]string{
		"link openers":    strings.Repeat("[a](", n/4),
		"nested brackets": strings.Repeat("[", n/2) + strings.Repeat("]", n/2),
		"reference defs":  defs.String(),
		"image openers":   strings.Repeat("![", n/2),
		"emphasis":        strings.Repeat("*_", n/2),
	} {
		t.Run(name, func(t *testing.T) {
			tool := "\n```yaml tool t\ndescription: t\neffect: read\nsteps:\n  - return: '1'\n```\n"
			p, l := manifest.Parse(manifest.Files{"PLUGIN.md": []byte(front + body + tool)})
			require.Contains(t, l.Error(), "the instructions are")
			require.Len(t, p.Tools, 1, "the block after the text is still found")
		})
	}
}
