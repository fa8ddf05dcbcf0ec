package steps

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/pkuinfo/harness/internal/atomicfile"
)

// FileKV is a plugin's private store: one JSON object in
// HOME/kv/<plugin>.json, rewritten atomically (temp file, fsync, rename) on
// every change, bounded by the KV limits.
type FileKV struct {
	path string
	lim  Limits
	mu   sync.Mutex
}

var pluginIDRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)

// OpenKV returns the store of plugin id under the home folder:
// HOME/kv/<id>.json for an official document, HOME/community/kv/<id>.json
// for a community one. An id is a name any document may take (a community
// document may stand in for a bundled one of the same id), so a community
// document never reads what an official one stored.
func OpenKV(home, id string, community bool, lim Limits) (*FileKV, error) {
	if !pluginIDRE.MatchString(id) {
		return nil, fmt.Errorf("plugin id %q cannot name a store", id)
	}
	if community {
		home = filepath.Join(home, "community")
	}
	return &FileKV{path: filepath.Join(home, "kv", id+".json"), lim: lim}, nil
}

func (s *FileKV) load() (map[string]any, error) {
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	if len(b) > s.lim.KVBytes+1024 {
		return nil, fmt.Errorf("the store %s is larger than %d bytes", filepath.Base(s.path), s.lim.KVBytes)
	}
	v, err := DecodeJSON(b, s.lim.Depth)
	if err != nil {
		return nil, fmt.Errorf("the store %s is damaged: %v", filepath.Base(s.path), err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the store %s is damaged: not an object", filepath.Base(s.path))
	}
	return m, nil
}

// Get returns the value of key.
func (s *FileKV) Get(key string) (any, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return nil, false, err
	}
	v, ok := m[key]
	return v, ok, nil
}

// Set stores v under key; nil deletes the key.
func (s *FileKV) Set(key string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v != nil {
		tooLarge := &LimitError{Limit: "kvValueBytes", Max: int64(s.lim.KVValueBytes), What: "the stored value"}
		if JSONOver(v, s.lim.Depth, s.lim.KVValueBytes) {
			return tooLarge
		}
		b, err := Encode(v, s.lim.Depth)
		if err != nil {
			return err
		}
		if len(b) > s.lim.KVValueBytes {
			return tooLarge
		}
	}
	m, err := s.load()
	if err != nil {
		return err
	}
	if v == nil {
		delete(m, key)
	} else {
		if _, ok := m[key]; !ok && len(m) >= s.lim.KVKeys {
			return &LimitError{Limit: "kvKeys", Max: int64(s.lim.KVKeys), What: "the store's keys"}
		}
		m[key] = Clean(v)
	}
	b, err := Encode(m, s.lim.Depth+1)
	if err != nil {
		return err
	}
	if len(b) > s.lim.KVBytes {
		return &LimitError{Limit: "kvBytes", Max: int64(s.lim.KVBytes), What: "the store"}
	}
	return writeAtomic(s.path, b)
}

// writeAtomic replaces the store's file atomically (internal/atomicfile),
// mode 0600, creating its folder.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, b, 0o600)
}

// MemKV is an in-memory store, for tests and hosts without a home folder.
type MemKV struct {
	mu sync.Mutex
	m  map[string]any
}

// Get returns the value of key.
func (s *MemKV) Get(key string) (any, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

// Set stores v under key; nil deletes the key.
func (s *MemKV) Set(key string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]any{}
	}
	if v == nil {
		delete(s.m, key)
	} else {
		s.m[key] = v
	}
	return nil
}

var (
	_ KV = (*FileKV)(nil)
	_ KV = (*MemKV)(nil)
)
