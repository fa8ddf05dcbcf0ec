package manifest_test

import (
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapabilitiesAreTheReferences: the capabilities a document may
// require are the plugin reference's ten, known without a warning; the
// four this engine once invented still parse, with a warning naming the
// reference's list.
func TestCapabilitiesAreTheReferences(t *testing.T) {
	doc := func(req string) manifest.Files {
		return manifest.Files{"PLUGIN.md": []byte("---\nid: caps\nname: C\ndescription: d\nversion: 1.0.0\nrequires: " + req + "\n---\nI.\n")}
	}
	_, l := manifest.Parse(doc("[network, campus-network, campus-session, notifications, background, shell, filesystem, cloud, phone-control, ongoing]"))
	require.False(t, l.HasErrors(), l.Error())
	assert.NotContains(t, l.Error(), "requires", "the reference's capabilities need no warning")

	for _, old := range manifest.OlderRequires {
		p, l := manifest.Parse(doc("[" + old + "]"))
		require.False(t, l.HasErrors(), l.Error())
		assert.Equal(t, []string{old}, p.Requires)
		assert.Contains(t, l.Error(), `PLUGIN.md:6:12: warning: requires "`+old+`" is not a capability of the plugin reference (network, campus-network,`)
	}
}
