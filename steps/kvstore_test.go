package steps_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileKV(t *testing.T) {
	home := t.TempDir()
	lim := steps.DefaultLimits()
	lim.KVValueBytes, lim.KVKeys, lim.KVBytes = 100, 3, 150
	kv, err := steps.OpenKV(home, "canteen", false, lim)
	require.NoError(t, err)
	_, ok, err := kv.Get("a")
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, kv.Set("a", map[string]any{"n": 1, "s": "x\u001by"}))
	b, err := os.ReadFile(filepath.Join(home, "kv", "canteen.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"a":{"n":1,"s":"xy"}}`, string(b))

	// A second store object sees the file.
	kv2, _ := steps.OpenKV(home, "canteen", false, lim)
	v, ok, err := kv2.Get("a")
	require.NoError(t, err)
	assert.True(t, ok)
	b, err = steps.Encode(v, 8)
	require.NoError(t, err)
	assert.Equal(t, `{"n":1,"s":"xy"}`, string(b))

	var le *steps.LimitError
	require.ErrorAs(t, kv.Set("big", strings.Repeat("x", 200)), &le)
	assert.Equal(t, "kvValueBytes", le.Limit)
	require.NoError(t, kv.Set("b", 1))
	require.NoError(t, kv.Set("c", 2))
	require.ErrorAs(t, kv.Set("d", 3), &le)
	assert.Equal(t, "kvKeys", le.Limit)
	require.NoError(t, kv.Set("c", nil), "nil deletes")
	require.NoError(t, kv.Set("d", strings.Repeat("y", 60)))
	require.ErrorAs(t, kv.Set("b", strings.Repeat("z", 90)), &le)
	assert.Equal(t, "kvBytes", le.Limit)

	_, err = steps.OpenKV(home, "../escape", false, lim)
	require.Error(t, err)

	require.NoError(t, os.WriteFile(filepath.Join(home, "kv", "canteen.json"), []byte("[1]"), 0o600))
	_, _, err = kv.Get("a")
	require.ErrorContains(t, err, "damaged")
	entries, _ := os.ReadDir(filepath.Join(home, "kv"))
	assert.Len(t, entries, 1, "no temporary files are left behind")
}

// A community document's store is apart from an official one's of the same
// id: one that stands in for a bundled document reads nothing it stored.
func TestFileKVCommunityApart(t *testing.T) {
	home := t.TempDir()
	lim := steps.DefaultLimits()
	official, err := steps.OpenKV(home, "campus-events", false, lim)
	require.NoError(t, err)
	require.NoError(t, official.Set("reminders", []any{"lecture at 8"}))
	community, err := steps.OpenKV(home, "campus-events", true, lim)
	require.NoError(t, err)
	_, ok, err := community.Get("reminders")
	require.NoError(t, err)
	assert.False(t, ok, "a community document read an official one's store")
	require.NoError(t, community.Set("mine", 1))
	_, err = os.Stat(filepath.Join(home, "community", "kv", "campus-events.json"))
	require.NoError(t, err)
	v, ok, err := official.Get("reminders")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []any{"lecture at 8"}, v)
	_, ok, _ = official.Get("mine")
	assert.False(t, ok)
}

// A value that shares its parts (one list held twice at each of 40
// levels: small in memory, 2^40 leaves as JSON) is refused by the store
// for its size before it is encoded, and the file is left as it was.
func TestFileKVSharedPartsRefused(t *testing.T) {
	home := t.TempDir()
	kv, err := steps.OpenKV(home, "canteen", false, steps.DefaultLimits())
	require.NoError(t, err)
	require.NoError(t, kv.Set("a", 1))
	var v any = 1.0
	for range 40 {
		v = []any{v, v}
	}
	err = kv.Set("b", v)
	var le *steps.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "kvValueBytes", le.Limit)
	b, err := os.ReadFile(filepath.Join(home, "kv", "canteen.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(b))

	_, err = steps.Encode(v, 256)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "stringBytes", le.Limit)
	assert.EqualValues(t, steps.MaxEncodeBytes, le.Max)
}
