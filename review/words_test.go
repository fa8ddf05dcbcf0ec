package review

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReferenceSpellingsDiffAsNoChange: a document that moves to the
// reference's spellings (dataSources as a map with args and ttlMs,
// legacy.pluginIds) declares the same thing: its diff is empty, and a real
// change of a source still shows.
func TestReferenceSpellingsDiffAsNoChange(t *testing.T) {
	tools := map[string]string{"crowd": "read"}
	old := doc(t, "version: 1.0.0\ndataSources:\n  - {name: crowd, tool: crowd, input: {}, ttl: 120, title: 人数}\nlegacy: {ids: [old-demo]}", tools)
	cur := doc(t, "version: 1.0.0\ndataSources:\n  crowd: {title: 人数, tool: crowd, args: {}, ttlMs: 120000}\nlegacy: {pluginIds: [old-demo]}", tools)
	assert.Empty(t, Diff(old, cur).Changes)
	longer := doc(t, "version: 1.0.0\ndataSources:\n  crowd: {title: 人数, tool: crowd, args: {}, ttlMs: 180000}\nlegacy: {pluginIds: [old-demo]}", tools)
	d := Diff(old, longer)
	require.Len(t, d.Changes, 1)
	assert.Equal(t, "dataSources", d.Changes[0].Path)
	assert.False(t, d.Wider)
}

// TestSheetIconAndMaxAgentSteps: the review sheet shows icon and
// maxAgentSteps as declared; a change of maxAgentSteps or core is a neutral
// change: they grant nothing.
func TestSheetIconAndMaxAgentSteps(t *testing.T) {
	tools := map[string]string{"crowd": "read"}
	p := doc(t, "version: 1.0.0\nicon: mic\nmaxAgentSteps: 12", tools)
	var b bytes.Buffer
	require.NoError(t, NewSheet(p, Info{Trust: "community"}).WriteJSON(&b))
	var m map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &m))
	assert.Equal(t, "mic", m["icon"])
	assert.Equal(t, float64(12), m["maxAgentSteps"])

	d := Diff(doc(t, "version: 1.0.0", tools), doc(t, "version: 1.0.0\nmaxAgentSteps: 50\ncore: true", tools))
	assert.False(t, d.Wider)
	var paths []string
	for _, c := range d.Changes {
		paths = append(paths, c.Path)
	}
	assert.ElementsMatch(t, []string{"maxAgentSteps", "core"}, paths)
}
