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

// TestDiffIPv6Respelled: one IPv6 address has many spellings, and the engine
// reaches the same origin by each (the proxy compares addresses, not text).
// The diff compared the text, so a respelled origin showed as a new, wider
// origin and the old one as removed. Another address is still wider.
func TestDiffIPv6Respelled(t *testing.T) {
	web := func(list string) *manifest.Plugin { return doc(t, "version: 1.0.0\naccess:\n  web: ["+list+"]", nil) }
	old := web("'https://[2001:db8::1]', 'https://[::ffff:8.8.8.8]:8443'")
	same := web("'https://[2001:0DB8:0:0:0:0:0:1]:443', 'https://[0:0:0:0:0:ffff:808:808]:8443'")
	d := Diff(old, same)
	require.True(t, d.Empty(), "%+v", d.Changes)
	require.True(t, Diff(same, old).Empty())
	other := Diff(old, web("'https://[2001:db8::2]', 'https://[::ffff:8.8.8.8]:8443'"))
	require.True(t, other.Wider, "%+v", other.Changes)
}
