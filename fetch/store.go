package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pkuinfo/harness/internal/atomicfile"
	"github.com/pkuinfo/harness/manifest"
)

// The home folder's layout, as far as the store owns it.
const (
	StateFile     = "state.json"
	StoreDir      = "store"
	QuarantineDir = "quarantine"
	LockFile      = ".lock"
)

// Store errors.
var (
	ErrNotInstalled = errors.New("not installed")
	ErrOtherLink    = errors.New("installed from another link")
	ErrHashMismatch = errors.New("stored files do not match their hash")
)

// Store is the home folder's store of installed documents. Its methods are
// safe for concurrent use by goroutines and processes: every change happens
// under the .lock file and every write is atomic.
type Store struct {
	dir string
	// Now is the clock for installed and checked times (HARNESS_NOW in the
	// command line).
	Now func() time.Time
	// fs is where the store writes: atomicfile.OS (a test passes one that
	// fails as a crash would).
	fs atomicfile.FS
}

// OpenStore opens the store in the home folder dir. It writes nothing: the
// folders are made by the first change (Update, Clean), so a command that
// only reads (tools, list, run ID) leaves a fresh home as it found it.
func OpenStore(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("no home folder")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return &Store{dir: abs, Now: time.Now, fs: atomicfile.OS}, nil
}

// Dir is the home folder.
func (s *Store) Dir() string { return s.dir }

var hashRe = regexp.MustCompile(`^h1:[A-Za-z0-9+/]{43}=$`)

// HashDir is the folder name under store/ for a content hash: the hash with
// a file-name-safe alphabet. Store paths come only from hashes.
func HashDir(hash string) (string, error) {
	if !hashRe.MatchString(hash) {
		return "", fmt.Errorf("%q is not a content hash (h1:…)", hash)
	}
	r := strings.NewReplacer("/", "_", "+", "-", ":", "-", "=", "")
	return r.Replace(hash), nil
}

func (s *Store) hashPath(hash string) (string, error) {
	d, err := HashDir(hash)
	if err != nil {
		return "", err
	}
	return filepath.Join(s.dir, StoreDir, d), nil
}

// Load reads the state (an empty state when there is none). It takes no
// lock: the state file is only ever replaced whole.
func (s *Store) Load() (*State, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, StateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return &State{Version: StateVersion, Plugins: map[string]*Entry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %v", StateFile, err)
	}
	if st.Version > StateVersion {
		return nil, fmt.Errorf("%s has format version %d; this engine knows up to %d", StateFile, st.Version, StateVersion)
	}
	if st.Plugins == nil {
		st.Plugins = map[string]*Entry{}
	}
	for id, e := range st.Plugins {
		if e == nil {
			delete(st.Plugins, id)
		}
	}
	for id, e := range st.Bundled {
		if e == nil {
			delete(st.Bundled, id)
		}
	}
	return &st, nil
}

// Tx is one change of the store, made under the lock: the state as read,
// and files put in store/ during it. Commit writes happen when the function
// passed to Update returns nil.
type Tx struct {
	State *State
	s     *Store
}

// Put stores files under their content hash (if not there already) and
// returns the hash. The files must pass manifest's checks.
func (tx *Tx) Put(files manifest.Files) (string, error) { return tx.s.put(files) }

// Update runs fn on the state under the store's lock and writes the state
// atomically when fn returns nil; on an error nothing is written (files put
// during fn stay unreferenced until the next Clean).
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := s.Load()
	if err != nil {
		return err
	}
	tx := &Tx{State: st, s: s}
	if err := fn(tx); err != nil {
		return err
	}
	return s.save(st)
}

func (s *Store) lock(ctx context.Context) (func(), error) {
	// Every change happens under the lock: the folders are made here.
	if err := os.MkdirAll(filepath.Join(s.dir, StoreDir), 0o755); err != nil {
		return nil, fmt.Errorf("creating the store: %w", err)
	}
	return LockHome(ctx, s.dir)
}

// LockHome takes the home folder dir's lock file (LockFile), under which
// every store of the home changes its files, waiting until ctx ends; the
// function it returns lets it go (atomicfile.Lock: a process's own lock
// where the system has none).
func LockHome(ctx context.Context, dir string) (func(), error) {
	unlock, err := atomicfile.Lock(ctx, filepath.Join(dir, LockFile), 10*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("locking the home folder: %w", err)
	}
	return unlock, nil
}

func (s *Store) save(st *State) error {
	st.Version = StateVersion
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFS(s.fs, filepath.Join(s.dir, StateFile), append(b, '\n'), 0o644)
}

// Install stores a fetched document's files and records e (its ID, Hash and
// the link fields) under the lock. An id installed from another link is
// refused with ErrOtherLink unless replace. Files of versions no longer
// referenced are removed.
func (s *Store) Install(ctx context.Context, e Entry, files manifest.Files, replace bool) error {
	if e.ID == "" {
		return errors.New("install: no id")
	}
	err := s.Update(ctx, func(tx *Tx) error {
		if old, ok := tx.State.Plugins[e.ID]; ok && old.Link != e.Link && !replace {
			return fmt.Errorf("%w: %q is installed from %s, not %s (use --replace to replace it)", ErrOtherLink, e.ID, old.Link, e.Link)
		}
		h, err := tx.Put(files)
		if err != nil {
			return err
		}
		if e.Hash != "" && e.Hash != h {
			return fmt.Errorf("install: the files hash to %s, not the reviewed %s", h, e.Hash)
		}
		e.Hash = h
		if old, ok := tx.State.Plugins[e.ID]; ok {
			if e.Modes == nil {
				e.Modes = old.Modes
			}
			if e.Extra == nil {
				e.Extra = old.Extra
			}
		}
		if e.Installed.IsZero() {
			e.Installed = s.Now().UTC()
		}
		ne := e
		tx.State.Plugins[e.ID] = &ne
		return nil
	})
	if err != nil {
		return err
	}
	return s.Clean(ctx)
}

// Remove forgets an installed plugin (ErrNotInstalled if there is none) and
// removes its stored files when no other entry uses them.
func (s *Store) Remove(ctx context.Context, id string) error {
	err := s.Update(ctx, func(tx *Tx) error {
		if _, ok := tx.State.Plugins[id]; !ok {
			return fmt.Errorf("%q: %w", id, ErrNotInstalled)
		}
		delete(tx.State.Plugins, id)
		return nil
	})
	if err != nil {
		return err
	}
	return s.Clean(ctx)
}

// Clean removes, under the lock, store folders no entry or pending update
// references (of an installed plugin or of a bundled document's update), and temporary files left by an interrupted write.
func (s *Store) Clean(ctx context.Context) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := s.Load()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, e := range append(slices.Collect(maps.Values(st.Plugins)), slices.Collect(maps.Values(st.Bundled))...) {
		for _, h := range []string{e.Hash, pendingHash(e)} {
			if d, err := HashDir(h); err == nil {
				keep[d] = true
			}
		}
	}
	des, err := os.ReadDir(filepath.Join(s.dir, StoreDir))
	if err != nil {
		return err
	}
	for _, de := range des {
		if !keep[de.Name()] {
			if err := os.RemoveAll(filepath.Join(s.dir, StoreDir, de.Name())); err != nil {
				return err
			}
		}
	}
	if des, err := os.ReadDir(s.dir); err == nil {
		for _, de := range des {
			// A crash's leftovers: the state's temporary file (named
			// ".tmp-state.json-*" by earlier versions) and a store folder
			// being written.
			n := de.Name()
			if strings.HasPrefix(n, "."+StateFile+".tmp-") || strings.HasPrefix(n, ".tmp-"+StateFile+"-") || strings.HasPrefix(n, ".tmp-store-") {
				_ = os.RemoveAll(filepath.Join(s.dir, n))
			}
		}
	}
	return nil
}

func pendingHash(e *Entry) string {
	if e.Pending == nil {
		return ""
	}
	return e.Pending.Hash
}

// Files reads the stored files of a hash and verifies them against it.
func (s *Store) Files(hash string) (manifest.Files, error) {
	p, err := s.hashPath(hash)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("stored files of %s: %w", hash, err)
	}
	files, err := manifest.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrHashMismatch, hash, err)
	}
	got, err := files.Hash()
	if err != nil {
		return nil, err
	}
	if got != hash {
		return nil, fmt.Errorf("%w: store/%s hashes to %s", ErrHashMismatch, filepath.Base(p), got)
	}
	return files, nil
}

// Installed is an installed plugin as loaded: its entry and verified files,
// or the error that makes it unusable.
type Installed struct {
	Entry *Entry
	Files manifest.Files
	Err   error
}

// LoadInstalled reads the state and every installed plugin's files,
// verified against their hash. A plugin whose files do not match is
// quarantined (its folder moved to quarantine/, the entry marked) and
// returned with Err set; the others load normally. Sorted by id.
func (s *Store) LoadInstalled(ctx context.Context) ([]Installed, error) {
	return s.loadInstalled(ctx, true)
}

func (s *Store) loadInstalled(ctx context.Context, again bool) ([]Installed, error) {
	st, err := s.Load()
	if err != nil {
		return nil, err
	}
	ids := slices.Sorted(maps.Keys(st.Plugins))
	var out []Installed
	var bad []string
	for _, id := range ids {
		e := st.Plugins[id]
		in := Installed{Entry: e}
		if e.Quarantined != "" {
			in.Err = fmt.Errorf("%s is quarantined: %s; install it again", id, e.Quarantined)
		} else if files, err := s.Files(e.Hash); err != nil {
			in.Err = fmt.Errorf("%s is quarantined: %v; install it again", id, err)
			if errors.Is(err, ErrHashMismatch) || errors.Is(err, fs.ErrNotExist) {
				bad = append(bad, id)
			}
		} else {
			in.Files = files
		}
		out = append(out, in)
	}
	if len(bad) > 0 {
		if err := s.quarantine(ctx, bad); err != nil {
			return out, err
		}
		if again {
			// Another process may have replaced a version meanwhile: read
			// the state quarantine left.
			return s.loadInstalled(ctx, false)
		}
	}
	return out, nil
}

// quarantine marks ids whose files failed verification and moves the files
// aside (re-checked under the lock).
func (s *Store) quarantine(ctx context.Context, ids []string) error {
	return s.Update(ctx, func(tx *Tx) error {
		for _, id := range ids {
			e, ok := tx.State.Plugins[id]
			if !ok || e.Quarantined != "" {
				continue
			}
			_, err := s.Files(e.Hash)
			if err == nil {
				continue
			}
			e.Quarantined = err.Error()
			p, perr := s.hashPath(e.Hash)
			if perr != nil {
				continue
			}
			q := filepath.Join(s.dir, QuarantineDir)
			if err := os.MkdirAll(q, 0o755); err != nil {
				return err
			}
			dst := filepath.Join(q, fmt.Sprintf("%s.%d", filepath.Base(p), s.Now().UnixNano()))
			if err := os.Rename(p, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
}

// put writes files to store/<hash>/ unless a verified copy is there.
func (s *Store) put(files manifest.Files) (string, error) {
	if err := files.Check(); err != nil {
		return "", err
	}
	hash, err := files.Hash()
	if err != nil {
		return "", err
	}
	dst, err := s.hashPath(hash)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dst); err == nil {
		if _, err := s.Files(hash); err == nil {
			return hash, nil
		}
		q := filepath.Join(s.dir, QuarantineDir)
		if err := os.MkdirAll(q, 0o755); err != nil {
			return "", err
		}
		if err := os.Rename(dst, filepath.Join(q, fmt.Sprintf("%s.%d", filepath.Base(dst), s.Now().UnixNano()))); err != nil {
			return "", err
		}
	}
	tmp, err := os.MkdirTemp(s.dir, ".tmp-store-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	dirs := map[string]bool{tmp: true}
	for _, name := range files.Names() {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if rel, err := filepath.Rel(tmp, p); err != nil || strings.HasPrefix(rel, "..") {
			return "", fmt.Errorf("path %q leaves the store folder", name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		for d := filepath.Dir(p); d != tmp && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
		if err := atomicfile.CreateFS(s.fs, p, files[name], 0o644); err != nil {
			return "", err
		}
	}
	for d := range dirs {
		if err := s.fs.SyncDir(d); err != nil {
			return "", err
		}
	}
	if err := s.fs.Rename(tmp, dst); err != nil {
		return "", fmt.Errorf("storing %s: %w", hash, err)
	}
	return hash, s.fs.SyncDir(filepath.Dir(dst))
}

// Get returns the entry of an installed plugin (ErrNotInstalled if none).
func (s *Store) Get(id string) (*Entry, error) {
	st, err := s.Load()
	if err != nil {
		return nil, err
	}
	e, ok := st.Plugins[id]
	if !ok {
		return nil, fmt.Errorf("%q: %w", id, ErrNotInstalled)
	}
	return e, nil
}
