package review

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// effectDoc is a document whose tool x declares effect read and runs
// steps.
func effectDoc(t *testing.T, steps string) *manifest.Plugin {
	t.Helper()
	p, l := manifest.Parse(manifest.Files{
		"PLUGIN.md":    []byte("---\nid: e\nname: E\ndescription: E.\nversion: 1.0.0\naccess:\n  campus: [card, portal]\n---\nI.\n"),
		"tools/x.yaml": []byte("description: X.\neffect: read\nsteps:\n" + steps),
	})
	require.False(t, l.HasErrors(), l.Error())
	return p
}

const (
	getSteps   = "  - request: {service: card, path: /x}\n"
	postSteps  = "  - request: {service: card, path: /x, method: POST, json: {}}\n"
	querySteps = "  - request: {service: portal, path: /portal2017/notice/retrAllSchoolNotice.do, method: POST, form: {a: b}}\n"
)

// The sheet shows the effective effect and why: a read tool that POSTs is
// a write.
func TestSheetShowsEffectiveEffect(t *testing.T) {
	s := NewSheet(effectDoc(t, postSteps), Info{Trust: "community"})
	require.Len(t, s.Tools, 1)
	tl := s.Tools[0]
	assert.Equal(t, manifest.Write, tl.Effect)
	assert.Equal(t, manifest.Read, tl.Declared)
	assert.Equal(t, "declared read, sends POST to card /x", tl.EffectWhy)
	assert.Equal(t, EffectWords(manifest.Write), tl.EffectAbout)
	var b bytes.Buffer
	require.NoError(t, s.WriteText(&b, false))
	assert.Contains(t, b.String(), "x — write: ")
	assert.Contains(t, b.String(), "counts as write: declared read, sends POST to card /x")
	b.Reset()
	require.NoError(t, s.WriteJSON(&b))
	var js map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &js))
	line := js["tools"].([]any)[0].(map[string]any)
	assert.Equal(t, "write", line["effect"])
	assert.Equal(t, "read", line["declared"])
	assert.Equal(t, "declared read, sends POST to card /x", line["effectWhy"])

	for _, st := range []string{getSteps, querySteps} {
		s := NewSheet(effectDoc(t, st), Info{Trust: "community"})
		assert.Equal(t, manifest.Read, s.Tools[0].Effect)
		assert.Empty(t, s.Tools[0].EffectWhy)
		b.Reset()
		require.NoError(t, s.WriteJSON(&b))
		assert.NotContains(t, b.String(), "effectWhy")
	}
}

// A change from effective read to effective write is wider, with the
// declared effect unchanged; the way back narrows.
func TestDiffEffectiveReadToWrite(t *testing.T) {
	d := Diff(effectDoc(t, getSteps), effectDoc(t, postSteps))
	require.True(t, d.Wider, "%+v", d.Changes)
	var c *Change
	for i := range d.Changes {
		if d.Changes[i].Path == "tools.x.effect" {
			c = &d.Changes[i]
		}
	}
	require.NotNil(t, c)
	assert.Equal(t, Broadened, c.Kind)
	assert.Equal(t, "read", c.Old)
	assert.Equal(t, "write", c.New)
	assert.Contains(t, c.Message, "tool x: effect read → write")
	assert.Contains(t, c.Message, "declared read, sends POST to card /x")

	back := Diff(effectDoc(t, postSteps), effectDoc(t, getSteps))
	assert.False(t, back.Wider)
	// A POST to a query endpoint is no widening.
	assert.False(t, Diff(effectDoc(t, getSteps), effectDoc(t, querySteps)).Wider)
	// A new tool that is effectively a write widens.
	old := effectDoc(t, getSteps)
	old.Tools = nil
	assert.True(t, Diff(old, effectDoc(t, postSteps)).Wider)
	assert.False(t, Diff(old, effectDoc(t, getSteps)).Wider)
}
