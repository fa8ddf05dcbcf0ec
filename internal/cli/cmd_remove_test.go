package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counterDoc keeps a number in its store and a preference; author names
// who wrote it (two documents of one id from different authors).
func counterDoc(author string) map[string]string {
	return map[string]string{
		"PLUGIN.md": "---\nid: counter\nname: C\ndescription: C.\nversion: 1.0.0\nauthor: " + author + "\naccess:\n  abilities: [kv]\n" +
			"preferences:\n  - name: step\n    kind: integer\n    title: Step\n    schema: {minimum: 1, maximum: 9}\n    default: 1\n---\nI.\n",
		"tools/count.yaml": "description: C.\neffect: write\nsteps:\n  - kv_get: n\n  - kv_set: { key: n, value: '(. // 0) + $prefs.step' }\n",
	}
}

// harness remove deletes the document's private data, and says so: the
// next document of that id, from any author, starts empty.
func TestRemoveDeletesPrivateData(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home}
	dir := writeDoc(t, t.TempDir(), counterDoc("alice"))
	code, _, errs := runCLI(t, env, "install", dir, "--yes")
	require.Equal(t, 0, code, errs)
	for want := 1; want <= 2; want++ {
		code, out, errs := runCLI(t, env, "run", "counter", "count")
		require.Equal(t, 0, code, errs)
		assert.Equal(t, fmt.Sprintf("%d\n", want), out)
	}
	kv := filepath.Join(home, "community", "kv", "counter.json")
	prefs := filepath.Join(home, "community", "prefs", "counter.json")
	require.FileExists(t, kv)
	// A preference the user set for it (as settings__set writes it), and
	// what an official document of that id once stored.
	require.NoError(t, os.MkdirAll(filepath.Dir(prefs), 0o700))
	require.NoError(t, os.WriteFile(prefs, []byte(`{"step":5}`), 0o600))
	officialKV := filepath.Join(home, "kv", "counter.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(officialKV), 0o700))
	require.NoError(t, os.WriteFile(officialKV, []byte(`{"n":40}`), 0o600))

	code, out, errs := runCLI(t, env, "remove", "counter")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "removed counter; deleted its stored data (kv, preferences)")
	assert.NoFileExists(t, kv)
	assert.NoFileExists(t, prefs)
	assert.NoFileExists(t, officialKV, "counter is no bundled document: every store of the id goes")

	// Another author's document of the same id starts empty, with the
	// default preference.
	dir2 := writeDoc(t, t.TempDir(), counterDoc("mallory"))
	code, _, errs = runCLI(t, env, "install", dir2, "--yes")
	require.Equal(t, 0, code, errs)
	code, out, errs = runCLI(t, env, "run", "counter", "count")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "1\n", out, "the next document of the id read the removed one's store")

	// Nothing stored: said so too.
	require.NoError(t, os.Remove(kv))
	code, out, errs = runCLI(t, env, "remove", "counter")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "removed counter; it had no stored data")
}

// A community document standing in for a bundled official one: remove
// deletes the community document's data and keeps what the bundled
// official document stored, which comes back.
func TestRemoveKeepsBundledOfficialData(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home}
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":        "---\nid: canteen\nname: C\ndescription: C.\nversion: 9.0.0\naccess:\n  abilities: [kv]\n---\nI.\n",
		"tools/count.yaml": "description: C.\neffect: write\nsteps:\n  - kv_set: { key: n, value: '1' }\n",
	})
	code, _, errs := runCLI(t, env, "install", dir, "--yes")
	require.Equal(t, 0, code, errs)
	code, _, errs = runCLI(t, env, "run", "canteen", "count")
	require.Equal(t, 0, code, errs)
	officialKV := filepath.Join(home, "kv", "canteen.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(officialKV), 0o700))
	require.NoError(t, os.WriteFile(officialKV, []byte(`{"seen":1}`), 0o600))

	code, out, errs := runCLI(t, env, "remove", "canteen")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "removed canteen; deleted its stored data (kv)")
	assert.Contains(t, out, "kept the data of the bundled official canteen")
	assert.NoFileExists(t, filepath.Join(home, "community", "kv", "canteen.json"))
	assert.FileExists(t, officialKV)
}
