package review

import (
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

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
