package atomicfile_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/internal/atomicfile"
	"github.com/pkuinfo/harness/internal/atomicfile/atomicfiletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReplacesWithMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	require.NoError(t, atomicfile.Write(p, []byte("one"), 0o600))
	require.NoError(t, atomicfile.Write(p, []byte("two"), 0o644))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
	if runtime.GOOS != "windows" && runtime.GOOS != "wasip1" && runtime.GOOS != "js" { // WASI and js have no permission bits
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "the mode is set, whatever the umask")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	assert.Empty(t, left, "no temporary file stays")
}

func TestWriteNoFolder(t *testing.T) {
	err := atomicfile.Write(filepath.Join(t.TempDir(), "missing", "f"), []byte("x"), 0o600)
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestWriteCrashAtEachStep: a failure at any step leaves the old file
// whole (or, after the rename, the new one) and no temporary file.
func TestWriteCrashAtEachStep(t *testing.T) {
	old := bytes.Repeat([]byte("old "), 1000)
	neu := bytes.Repeat([]byte("new!"), 2000)
	for _, at := range atomicfiletest.Steps {
		t.Run(at, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.json")
			require.NoError(t, atomicfile.Write(p, old, 0o600))
			f := &atomicfiletest.Fail{At: at}
			err := atomicfile.WriteFS(f, p, neu, 0o600)
			require.ErrorIs(t, err, atomicfiletest.ErrInjected)
			assert.Equal(t, 1, f.Hits())
			b, rerr := os.ReadFile(p)
			require.NoError(t, rerr)
			if at == "syncdir" {
				assert.Equal(t, neu, b, "renamed before the folder sync failed")
			} else {
				assert.Equal(t, old, b, "the old file is untouched")
			}
			left, _ := filepath.Glob(filepath.Join(dir, atomicfile.TempPattern(p)))
			assert.Empty(t, left, "the temporary file is removed")
		})
	}
}

// TestWriteConcurrent: concurrent writers each replace the file whole.
func TestWriteConcurrent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	var wg sync.WaitGroup
	want := map[string]bool{}
	for i := range 8 {
		data := bytes.Repeat([]byte(fmt.Sprint(i)), 10000)
		want[string(data)] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, atomicfile.Write(p, data, 0o600))
		}()
	}
	wg.Wait()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.True(t, want[string(b)], "one writer's whole content")
}

func TestCreateFS(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new")
	require.NoError(t, atomicfile.CreateFS(atomicfile.OS, p, []byte("x"), 0o644))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "x", string(b))
	assert.ErrorIs(t, atomicfile.CreateFS(atomicfile.OS, p, []byte("y"), 0o644), os.ErrExist, "never over an existing file")
	for _, at := range []string{"create", "write", "sync", "close"} {
		err := atomicfile.CreateFS(&atomicfiletest.Fail{At: at}, filepath.Join(dir, at), []byte("data"), 0o644)
		assert.ErrorIs(t, err, atomicfiletest.ErrInjected, at)
	}
	require.NoError(t, atomicfile.SyncDir(dir))
	if atomicfile.DirSync { // else a no-op (TestSyncDir)
		assert.Error(t, atomicfile.SyncDir(filepath.Join(dir, "missing")))
	}
}

// TestFailMatch: only the operations Match accepts fail, and with Once only
// the first.
func TestFailMatch(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	f := &atomicfiletest.Fail{At: "rename", Match: func(name string) bool { return name == b }, Once: true}
	require.NoError(t, atomicfile.WriteFS(f, a, []byte("a"), 0o600))
	require.ErrorIs(t, atomicfile.WriteFS(f, b, []byte("b"), 0o600), atomicfiletest.ErrInjected)
	require.NoError(t, atomicfile.WriteFS(f, b, []byte("b"), 0o600))
	assert.Equal(t, 1, f.Hits())
}

// SyncDir fsyncs a folder where the system can (a missing folder is an
// error: it is really opened) and is a no-op where it cannot (Windows,
// wasip1, js), so that a write, and every store, works there.
func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	switch runtime.GOOS {
	case "windows", "wasip1", "js":
		assert.False(t, atomicfile.DirSync)
		assert.NoError(t, atomicfile.SyncDir(dir))
		assert.NoError(t, atomicfile.SyncDir(missing), "nothing is opened")
	default:
		assert.True(t, atomicfile.DirSync)
		assert.NoError(t, atomicfile.SyncDir(dir))
		assert.ErrorIs(t, atomicfile.SyncDir(missing), os.ErrNotExist)
	}
	p := filepath.Join(dir, "state.json")
	require.NoError(t, atomicfile.Write(p, []byte("one"), 0o600))
	require.NoError(t, atomicfile.Write(p, []byte("two"), 0o600))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
}
