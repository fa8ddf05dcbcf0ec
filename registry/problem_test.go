package registry_test

import (
	"errors"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A document's problem names the document and its content hash, with the
// message unchanged, so a host can say it once per content.
func TestProblemsNameTheDocumentContent(t *testing.T) {
	doc := func(id, effect string) manifest.Files {
		return manifest.Files{
			"PLUGIN.md":    []byte("---\nid: " + id + "\nname: N\ndescription: D.\nversion: 1.0.0\n---\nI.\n"),
			"tools/t.yaml": []byte("description: T.\neffect: " + effect + "\nsteps:\n  - return: '1'\n"),
		}
	}
	r := registry.New()
	bad := doc("bad", "sometimes")
	_, err := r.AddFiles(bad, registry.Community, registry.DocOptions{})
	require.Error(t, err)
	_, err = r.AddFiles(doc("twice", "read"), registry.Community, registry.DocOptions{})
	require.NoError(t, err)
	other := doc("twice", "write")
	_, err = r.AddFiles(other, registry.Community, registry.DocOptions{})
	require.ErrorIs(t, err, registry.ErrConflict)

	ps := r.Problems()
	require.Len(t, ps, 2)
	for i, want := range []struct {
		id    string
		files manifest.Files
	}{{"bad", bad}, {"twice", other}} {
		var dp *registry.DocumentProblem
		require.True(t, errors.As(ps[i], &dp), ps[i].Error())
		h, err := want.files.Hash()
		require.NoError(t, err)
		assert.Equal(t, want.id, dp.ID)
		assert.Equal(t, h, dp.Hash)
		assert.Equal(t, dp.Err.Error(), ps[i].Error(), "the message is the error's")
	}
	assert.ErrorIs(t, ps[1], registry.ErrConflict)
	assert.Contains(t, ps[0].Error(), "tools/t.yaml:2:9")
}
