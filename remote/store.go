package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/pkuinfo/harness/internal/atomicfile"
)

// Entry is one added remote plugin in the home. Whether it is enabled, and
// its modes, are the registry's settings, as for every plugin.
type Entry struct {
	Manifest *Manifest `json:"manifest"`
	Added    time.Time `json:"added"`
	HasToken bool      `json:"hasToken"` // its token is in the keystore under its id
	// Pending is a newer listing with wider access, waiting for the user.
	Pending *Manifest `json:"pending,omitempty"`
	Checked time.Time `json:"checked,omitzero"`
	Error   string    `json:"error,omitempty"` // the last reconnect's failure
}

// Store keeps remote plugins in the home folder's remote.json, changed
// under remote.json.lock.
type Store struct{ Dir string }

type storeFile struct {
	Version int               `json:"version"`
	Plugins map[string]*Entry `json:"plugins"`
}

const maxStoreBytes = 32 << 20

func (s Store) path() string { return filepath.Join(s.Dir, "remote.json") }

// Load reads every entry; a home with none has an empty map. It writes
// nothing.
func (s Store) Load() (map[string]*Entry, error) {
	b, err := os.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*Entry{}, nil
	}
	if err != nil {
		return nil, err
	}
	if len(b) > maxStoreBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", s.path(), maxStoreBytes)
	}
	var f storeFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", s.path(), err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s has version %d; this engine reads version 1", s.path(), f.Version)
	}
	if f.Plugins == nil {
		f.Plugins = map[string]*Entry{}
	}
	for id, e := range f.Plugins {
		if e == nil || e.Manifest == nil || e.Manifest.ID != id {
			return nil, fmt.Errorf("%s: the entry %q is damaged", s.path(), id)
		}
	}
	return f.Plugins, nil
}

// IDs lists the added plugins' ids in order.
func (s Store) IDs() ([]string, error) {
	m, err := s.Load()
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(m)), nil
}

// Change runs fn on the entries under the lock and writes what it leaves;
// fn returning an error writes nothing.
func (s Store) Change(fn func(map[string]*Entry) error) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	unlock, err := atomicfile.Lock(context.Background(), s.path()+".lock", 5*time.Millisecond)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := s.Load()
	if err != nil {
		return err
	}
	if err := fn(cur); err != nil {
		return err
	}
	b, err := json.MarshalIndent(storeFile{Version: 1, Plugins: cur}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.path(), append(b, '\n'), 0o600)
}
