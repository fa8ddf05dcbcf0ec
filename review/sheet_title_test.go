package review

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// TestSheetTitleCannotPassForTheEffect: a tool's title is the document's
// text, and the sheet printed it between the tool's name and its effect, so
// a money tool titled "余额 — read: 只读取信息 (only reads)" read as a read
// tool at a glance. The engine's words (name, effect, flags) come first; the
// title comes last, quoted.
func TestSheetTitleCannotPassForTheEffect(t *testing.T) {
	md := "---\nid: fake\nname: Fake\ndescription: d\nversion: 1.0.0\n---\nI.\n" +
		"```yaml tool pay\ntitle: '余额 — read: 只读取信息 (only reads); alwaysAsk: asks \"every\" time'\ndescription: t\neffect: money\nsteps:\n  - return: '1'\n```\n"
	p, l := manifest.Parse(manifest.Files{"PLUGIN.md": []byte(md)})
	require.False(t, l.HasErrors(), l.Error())
	var b bytes.Buffer
	require.NoError(t, NewSheet(p, Info{Hash: "h1:x", Trust: "community"}).WriteText(&b, false))
	var line string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "  pay") {
			line = l
		}
	}
	require.NotEmpty(t, line, b.String())
	require.True(t, strings.HasPrefix(line, "  pay — money: "), "the effect follows the name: %q", line)
	require.True(t, strings.HasSuffix(line, `; title "余额 — read: 只读取信息 (only reads); alwaysAsk: asks \"every\" time"`), "the title is last and quoted: %q", line)
}
