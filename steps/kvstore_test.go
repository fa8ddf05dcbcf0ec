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
	kv, err := steps.OpenKV(home, "canteen", lim)
	require.NoError(t, err)
	_, ok, err := kv.Get("a")
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, kv.Set("a", map[string]any{"n": 1, "s": "x\u001by"}))
	b, err := os.ReadFile(filepath.Join(home, "kv", "canteen.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"a":{"n":1,"s":"xy"}}`, string(b))

	// A second store object sees the file.
	kv2, _ := steps.OpenKV(home, "canteen", lim)
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

	_, err = steps.OpenKV(home, "../escape", lim)
	require.Error(t, err)

	require.NoError(t, os.WriteFile(filepath.Join(home, "kv", "canteen.json"), []byte("[1]"), 0o600))
	_, _, err = kv.Get("a")
	require.ErrorContains(t, err, "damaged")
	entries, _ := os.ReadDir(filepath.Join(home, "kv"))
	assert.Len(t, entries, 1, "no temporary files are left behind")
}
