package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pkuinfo/harness/internal/atomicfile"
	"github.com/pkuinfo/harness/manifest"
)

// PluginSettings is what the user chose for one plugin.
type PluginSettings struct {
	Modes    map[manifest.Effect]manifest.Mode `json:"modes,omitempty"`
	Disabled bool                              `json:"disabled,omitempty"`
}

// Store keeps the user's choices: modes and enabled flags per plugin, and
// preference values.
type Store interface {
	// Settings returns every plugin's settings, by plugin id.
	Settings() (map[string]PluginSettings, error)
	// UpdateSettings changes one plugin's settings atomically.
	UpdateSettings(id string, fn func(*PluginSettings)) error
	// Prefs returns a plugin's preference values (nil when none are set).
	Prefs(id string) (map[string]any, error)
	// SetPrefs replaces a plugin's preference values.
	SetPrefs(id string, values map[string]any) error
}

// MemoryStore is a Store in memory, for tests and one-shot runs.
type MemoryStore struct {
	mu       sync.Mutex
	settings map[string]PluginSettings
	prefs    map[string]map[string]any
	grants   []Grant
}

// NewMemoryStore makes an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{settings: map[string]PluginSettings{}, prefs: map[string]map[string]any{}}
}

// Settings implements Store.
func (m *MemoryStore) Settings() (map[string]PluginSettings, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]PluginSettings{}
	for k, v := range m.settings {
		out[k] = clonePS(v)
	}
	return out, nil
}

// UpdateSettings implements Store.
func (m *MemoryStore) UpdateSettings(id string, fn func(*PluginSettings)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ps := clonePS(m.settings[id])
	fn(&ps)
	m.settings[id] = ps
	return nil
}

// Prefs implements Store.
func (m *MemoryStore) Prefs(id string) (map[string]any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneMap(m.prefs[id]), nil
}

// SetPrefs implements Store.
func (m *MemoryStore) SetPrefs(id string, values map[string]any) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prefs[id] = cloneMap(values)
	return nil
}

func clonePS(p PluginSettings) PluginSettings {
	out := PluginSettings{Disabled: p.Disabled, Modes: maps.Clone(p.Modes)}
	if out.Modes == nil {
		out.Modes = map[manifest.Effect]manifest.Mode{}
	}
	return out
}

func cloneMap(m map[string]any) map[string]any { return maps.Clone(m) }

// HomeStore keeps the user's choices in the home folder:
// permissions.json (modes and enabled flags) and prefs/<plugin>.json
// (preference values). Every write is a temp file, fsync and rename.
type HomeStore struct {
	Dir string
	mu  sync.Mutex
}

// Bounds on the files HomeStore reads.
const (
	maxSettingsBytes = 1 << 20
	maxPrefsBytes    = 256 << 10
)

type settingsFile struct {
	Plugins map[string]PluginSettings `json:"plugins"`
}

func (h *HomeStore) settingsPath() string { return filepath.Join(h.Dir, "permissions.json") }

// Settings implements Store.
func (h *HomeStore) Settings() (map[string]PluginSettings, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.readSettings()
}

func (h *HomeStore) readSettings() (map[string]PluginSettings, error) {
	var f settingsFile
	if err := readJSON(h.settingsPath(), maxSettingsBytes, &f); err != nil {
		return nil, err
	}
	if f.Plugins == nil {
		f.Plugins = map[string]PluginSettings{}
	}
	return f.Plugins, nil
}

// UpdateSettings implements Store.
func (h *HomeStore) UpdateSettings(id string, fn func(*PluginSettings)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	all, err := h.readSettings()
	if err != nil {
		return err
	}
	ps := clonePS(all[id])
	fn(&ps)
	all[id] = ps
	return writeJSON(h.settingsPath(), settingsFile{Plugins: all})
}

func (h *HomeStore) prefsPath(key string) (string, error) {
	dir, id := h.Dir, key
	if rest, ok := strings.CutPrefix(key, communityKey); ok {
		dir, id = filepath.Join(h.Dir, "community"), rest
	}
	if !idRE.MatchString(id) || len(id) > manifest.MaxIDLen {
		return "", fmt.Errorf("plugin id %q is not a valid id", id)
	}
	return filepath.Join(dir, "prefs", id+".json"), nil
}

// Prefs implements Store.
func (h *HomeStore) Prefs(id string) (map[string]any, error) {
	p, err := h.prefsPath(id)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := readJSON(p, maxPrefsBytes, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// SetPrefs implements Store.
func (h *HomeStore) SetPrefs(id string, values map[string]any) error {
	p, err := h.prefsPath(id)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return writeJSON(p, values)
}

// readJSON reads a bounded JSON file; a missing file leaves v untouched.
func readJSON(path string, max int64, v any) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return err
	}
	if int64(buf.Len()) > max {
		return fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	if err := json.Unmarshal(buf.Bytes(), v); err != nil {
		return &notValidError{path, err}
	}
	return nil
}

// writeJSON writes v atomically (internal/atomicfile), mode 0600, creating
// its folder.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o600)
}
