package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/atomicfile"
	"github.com/pkuinfo/harness/internal/atomicfile/atomicfiletest"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

func docFiles(id string) manifest.Files {
	return manifest.Files{"PLUGIN.md": []byte(doc(id)), "tools/t.yaml": []byte("title: " + id + "\n")}
}

func entry(id string) Entry {
	return Entry{ID: id, Link: "https://github.com/acme/p/tree/main/" + id, Kind: KindGitHub, Ref: "refs/heads/main",
		Commit: "0123456789abcdef0123456789abcdef01234567", Trust: TrustCommunity, Enabled: true}
}

func TestStoreInstallListRemove(t *testing.T) {
	ctx := context.Background()
	s, err := OpenStore(t.TempDir())
	require.NoError(t, err)
	s.Now = func() time.Time { return time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC) }
	require.NoError(t, s.Install(ctx, entry("a"), docFiles("a"), false))
	require.NoError(t, s.Install(ctx, entry("b"), docFiles("b"), false))

	st, err := s.Load()
	require.NoError(t, err)
	require.Len(t, st.Plugins, 2)
	h, _ := docFiles("a").Hash()
	assert.Equal(t, h, st.Plugins["a"].Hash)
	assert.Equal(t, s.Now(), st.Plugins["a"].Installed)
	d, _ := HashDir(h)
	assert.FileExists(t, filepath.Join(s.Dir(), "store", d, "tools", "t.yaml"))

	got, err := s.LoadInstalled(ctx)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.NoError(t, got[0].Err)
	assert.Equal(t, docFiles("a"), got[0].Files)

	// Another link for the same id: refused unless replace.
	other := entry("a")
	other.Link = "https://example.com/a/PLUGIN.md"
	err = s.Install(ctx, other, docFiles("a"), false)
	assert.ErrorIs(t, err, ErrOtherLink)
	require.NoError(t, s.Install(ctx, other, docFiles("a"), true))

	require.NoError(t, s.Remove(ctx, "a"))
	assert.ErrorIs(t, s.Remove(ctx, "a"), ErrNotInstalled)
	assert.NoDirExists(t, filepath.Join(s.Dir(), "store", d), "unreferenced files are removed")
	st, _ = s.Load()
	assert.Len(t, st.Plugins, 1)
}

func TestStateUnknownFieldsRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenStore(dir)
	require.NoError(t, err)
	h, _ := docFiles("a").Hash()
	raw := `{"version":1,"future":{"x":1},"plugins":{"a":{"id":"a","link":"L","kind":"url","hash":"` + h +
		`","trust":"community","installed":"2026-01-01T00:00:00Z","enabled":true,"modes":{"write":"ask"},"newField":[1,2],` +
		`"pending":{"hash":"` + h + `","wider":true,"changes":["new origin"],"diffJSON":{"k":"v"}}}}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, StateFile), []byte(raw), 0o644))
	require.NoError(t, s.Update(ctx, func(tx *Tx) error {
		tx.State.Plugins["a"].LastChecked = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
		return nil
	}))
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, map[string]any{"x": float64(1)}, m["future"])
	a := m["plugins"].(map[string]any)["a"].(map[string]any)
	assert.Equal(t, []any{float64(1), float64(2)}, a["newField"])
	assert.Equal(t, "2026-02-01T00:00:00Z", a["lastChecked"])
	assert.Equal(t, map[string]any{"write": "ask"}, a["modes"])
	assert.Equal(t, map[string]any{"k": "v"}, a["pending"].(map[string]any)["diffJSON"])
}

func TestStoreQuarantine(t *testing.T) {
	ctx := context.Background()
	s, err := OpenStore(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, s.Install(ctx, entry("a"), docFiles("a"), false))
	require.NoError(t, s.Install(ctx, entry("b"), docFiles("b"), false))
	st, _ := s.Load()
	d, _ := HashDir(st.Plugins["a"].Hash)
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "store", d, "PLUGIN.md"), []byte("tampered"), 0o644))

	got, err := s.LoadInstalled(ctx)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Error(t, got[0].Err)
	assert.ErrorContains(t, got[0].Err, "a is quarantined")
	assert.ErrorContains(t, got[0].Err, "do not match their hash")
	assert.NoError(t, got[1].Err, "the others keep working")
	assert.Equal(t, docFiles("b"), got[1].Files)

	st, _ = s.Load()
	assert.NotEmpty(t, st.Plugins["a"].Quarantined)
	assert.NoDirExists(t, filepath.Join(s.Dir(), "store", d))
	q, _ := os.ReadDir(filepath.Join(s.Dir(), QuarantineDir))
	assert.Len(t, q, 1)

	// Installing again heals it.
	require.NoError(t, s.Install(ctx, entry("a"), docFiles("a"), false))
	got, err = s.LoadInstalled(ctx)
	require.NoError(t, err)
	assert.NoError(t, got[0].Err)
}

// TestStoreCrash injects a failure at each step of the writes, of the state
// file and of a version's folder: the state is the old one or the new one,
// never a mix, and always readable.
func TestStoreCrash(t *testing.T) {
	ctx := context.Background()
	type crash struct {
		name, at string
		state    bool // the state file's write, else the store folder's
	}
	var crashes []crash
	for _, at := range atomicfiletest.Steps {
		crashes = append(crashes, crash{at, at, true})
	}
	for _, at := range []string{"create", "write", "sync", "close", "syncdir", "rename"} {
		crashes = append(crashes, crash{"store-" + at, at, false})
	}
	for _, c := range crashes {
		t.Run(c.name, func(t *testing.T) {
			s, err := OpenStore(t.TempDir())
			require.NoError(t, err)
			require.NoError(t, s.Install(ctx, entry("a"), docFiles("a"), false))
			old, err := os.ReadFile(filepath.Join(s.Dir(), StateFile))
			require.NoError(t, err)
			state := filepath.Join(s.Dir(), StateFile)
			match := func(name string) bool {
				if c.at == "syncdir" {
					return (name == s.Dir()) == c.state
				}
				return strings.Contains(name, StateFile) == c.state
			}
			fail := &atomicfiletest.Fail{At: c.at, Match: match}
			s.fs = fail
			err = s.Install(ctx, entry("b"), docFiles("b"), false)
			s.fs = atomicfile.OS
			assert.ErrorIs(t, err, atomicfiletest.ErrInjected)
			assert.Equal(t, 1, fail.Hits(), "the failure ends the install")

			now, err := os.ReadFile(state)
			require.NoError(t, err)
			st, err := s.Load()
			require.NoError(t, err, "the state file is whole")
			if string(now) == string(old) {
				assert.Len(t, st.Plugins, 1)
			} else {
				// The rename happened before the failure: the new state.
				assert.Equal(t, "syncdir", c.name)
				assert.Len(t, st.Plugins, 2)
			}
			got, err := s.LoadInstalled(ctx)
			require.NoError(t, err)
			for _, in := range got {
				assert.NoError(t, in.Err)
			}
			require.NoError(t, s.Clean(ctx))
			left, _ := filepath.Glob(filepath.Join(s.Dir(), ".*tmp-*"))
			assert.Empty(t, left)
		})
	}
}

// TestStoreCleanRemovesCrashLeftovers: temporary files a crash left (also
// under the name earlier versions used) are removed by Clean.
func TestStoreCleanRemovesCrashLeftovers(t *testing.T) {
	ctx := context.Background()
	s, err := OpenStore(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, s.Install(ctx, entry("a"), docFiles("a"), false))
	for _, n := range []string{".state.json.tmp-1", ".tmp-state.json-2"} {
		require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), n), []byte("{"), 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(s.Dir(), ".tmp-store-3"), 0o755))
	require.NoError(t, s.Clean(ctx))
	left, _ := filepath.Glob(filepath.Join(s.Dir(), ".*tmp-*"))
	assert.Empty(t, left)
	_, err = s.Get("a")
	assert.NoError(t, err)
}

func TestStoreConcurrentGoroutines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var g errgroup.Group
	for i := range 16 {
		g.Go(func() error {
			s, err := OpenStore(dir)
			if err != nil {
				return err
			}
			return s.Install(ctx, entry(fmt.Sprintf("g%d", i)), docFiles(fmt.Sprintf("g%d", i%4)), false)
		})
	}
	require.NoError(t, g.Wait())
	s, _ := OpenStore(dir)
	got, err := s.LoadInstalled(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 16)
	for _, in := range got {
		assert.NoError(t, in.Err)
	}
}

// TestStoreHelperProcess is a child process of the tests below.
func TestStoreHelperProcess(t *testing.T) {
	dir := os.Getenv("FETCH_STORE_CHILD_DIR")
	if dir == "" {
		t.Skip("only as a child process")
	}
	prefix := os.Getenv("FETCH_STORE_CHILD_PREFIX")
	n, _ := strconv.Atoi(os.Getenv("FETCH_STORE_CHILD_N"))
	s, err := OpenStore(dir)
	require.NoError(t, err)
	for i := 0; n == 0 || i < n; i++ {
		id := fmt.Sprintf("%s%d", prefix, i)
		require.NoError(t, s.Install(context.Background(), entry(id), docFiles(id), false))
	}
}

func child(t *testing.T, dir, prefix string, n int) *exec.Cmd {
	if runtime.GOOS == "wasip1" || runtime.GOOS == "js" {
		t.Skip("no processes to start on " + runtime.GOOS)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoreHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FETCH_STORE_CHILD_DIR="+dir, "FETCH_STORE_CHILD_PREFIX="+prefix, "FETCH_STORE_CHILD_N="+strconv.Itoa(n))
	return cmd
}

func TestStoreConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	a, b := child(t, dir, "a", 15), child(t, dir, "b", 15)
	require.NoError(t, a.Start())
	require.NoError(t, b.Start())
	require.NoError(t, a.Wait())
	require.NoError(t, b.Wait())
	s, _ := OpenStore(dir)
	got, err := s.LoadInstalled(context.Background())
	require.NoError(t, err)
	assert.Len(t, got, 30)
	for _, in := range got {
		assert.NoError(t, in.Err)
	}
}

// TestStoreKilled kills a process in the middle of installing: whatever the
// moment, the state is readable and every entry's files verify.
func TestStoreKilled(t *testing.T) {
	for round := 0; round < 3; round++ {
		dir := t.TempDir()
		c := child(t, dir, "k", 0)
		require.NoError(t, c.Start())
		time.Sleep(time.Duration(150+100*round) * time.Millisecond)
		require.NoError(t, c.Process.Signal(syscall.SIGKILL))
		_ = c.Wait()
		s, _ := OpenStore(dir)
		got, err := s.LoadInstalled(context.Background())
		require.NoError(t, err)
		for _, in := range got {
			assert.NoError(t, in.Err)
		}
		require.NoError(t, s.Clean(context.Background()))
		t.Logf("round %d: %d installed before the kill", round, len(got))
	}
}

func TestStorePendingKept(t *testing.T) {
	ctx := context.Background()
	s, err := OpenStore(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, s.Install(ctx, entry("a"), docFiles("a"), false))
	_, err = s.Get("zz")
	assert.ErrorIs(t, err, ErrNotInstalled)
	require.NoError(t, s.Update(ctx, func(tx *Tx) error {
		h, err := tx.Put(docFiles("a2"))
		if err != nil {
			return err
		}
		tx.State.Plugins["a"].Pending = &Pending{Hash: h, Version: "2.0.0", Wider: true, Changes: []string{"+ web origin https://x.example"}}
		return nil
	}))
	// The old version keeps working while the update is pending, and the
	// pending version's files survive a clean.
	require.NoError(t, s.Clean(ctx))
	got, err := s.LoadInstalled(ctx)
	require.NoError(t, err)
	assert.Equal(t, docFiles("a"), got[0].Files)
	e, err := s.Get("a")
	require.NoError(t, err)
	files, err := s.Files(e.Pending.Hash)
	require.NoError(t, err)
	assert.Equal(t, docFiles("a2"), files)
}
