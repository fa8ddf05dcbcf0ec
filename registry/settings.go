package registry

import (
	"fmt"

	"github.com/pkuinfo/harness/manifest"
)

// loadSettings reads the store once; later reads use the snapshot until an
// update or Reload.
func (r *Registry) loadSettings() (map[string]PluginSettings, error) {
	r.mu.RLock()
	if r.loaded {
		defer r.mu.RUnlock()
		return r.settings, r.settingsErr
	}
	r.mu.RUnlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.loaded {
		r.settings, r.settingsErr = r.store.Settings()
		r.loaded = true
	}
	return r.settings, r.settingsErr
}

// Reload drops the settings snapshot, so the next decision reads the store.
func (r *Registry) Reload() {
	r.mu.Lock()
	r.loaded = false
	r.mu.Unlock()
}

// merged is a document's settings with those stored under its legacy ids
// carried over: per effect the strictest mode any of them set, and disabled
// if any of them is.
func (r *Registry) merged(all map[string]PluginSettings, d *Document) PluginSettings {
	ids := append([]string{d.ID}, r.legacyIDs(d)...)
	out := PluginSettings{Modes: map[manifest.Effect]manifest.Mode{}}
	for _, id := range ids {
		ps, ok := all[id]
		if !ok {
			continue
		}
		out.Disabled = out.Disabled || ps.Disabled
		for e, m := range ps.Modes {
			if cur, ok := out.Modes[e]; ok {
				out.Modes[e] = Stricter(cur, m)
			} else {
				out.Modes[e] = m
			}
		}
	}
	return out
}

// Settings returns a document's stored settings, legacy ones carried over.
func (r *Registry) Settings(plugin string) (PluginSettings, error) {
	d, ok := r.Document(plugin)
	if !ok {
		return PluginSettings{}, fmt.Errorf("no plugin %q", plugin)
	}
	all, err := r.loadSettings()
	if err != nil {
		return PluginSettings{}, err
	}
	return r.merged(all, d), nil
}

// update changes a document's settings; the carried-over legacy entries are
// folded into the current id first and cleared.
func (r *Registry) update(d *Document, fn func(*PluginSettings)) error {
	all, err := r.loadSettings()
	if err != nil {
		return err
	}
	cur := r.merged(all, d)
	if err := r.store.UpdateSettings(d.ID, func(ps *PluginSettings) {
		*ps = clonePS(cur)
		fn(ps)
	}); err != nil {
		return err
	}
	if d.Plugin != nil {
		for _, old := range r.legacyIDs(d) {
			if _, ok := all[old]; ok {
				if err := r.store.UpdateSettings(old, func(ps *PluginSettings) { *ps = PluginSettings{} }); err != nil {
					return err
				}
			}
		}
	}
	r.Reload()
	return nil
}

// Mode is the mode that applies to an effect of a plugin: the user's
// choice or the default, within the trust's bounds.
func (r *Registry) Mode(plugin string, e manifest.Effect) (manifest.Mode, error) {
	d, ok := r.Document(plugin)
	if !ok {
		return "", fmt.Errorf("no plugin %q", plugin)
	}
	all, err := r.loadSettings()
	if err != nil {
		return "", err
	}
	return Effective(d.Trust, d.Plugin, e, r.merged(all, d).Modes[e]), nil
}

// SetMode sets the mode of an effect of a plugin, within the trust's bounds.
// An empty mode goes back to the default.
func (r *Registry) SetMode(plugin string, e manifest.Effect, m manifest.Mode) error {
	d, ok := r.Document(plugin)
	if !ok {
		return fmt.Errorf("no plugin %q", plugin)
	}
	if m != "" {
		if err := CheckMode(d.Trust, e, m); err != nil {
			return err
		}
	} else if e.Rank() < 0 {
		return fmt.Errorf("effect %q must be read, write, money or public", e)
	}
	return r.update(d, func(ps *PluginSettings) {
		if m == "" {
			delete(ps.Modes, e)
		} else {
			ps.Modes[e] = m
		}
	})
}

// Enabled reports whether a plugin is enabled.
func (r *Registry) Enabled(plugin string) (bool, error) {
	ps, err := r.Settings(plugin)
	if err != nil {
		return false, err
	}
	return !ps.Disabled, nil
}

// SetEnabled enables or disables a plugin; core documents cannot be
// disabled.
func (r *Registry) SetEnabled(plugin string, on bool) error {
	d, ok := r.Document(plugin)
	if !ok {
		return fmt.Errorf("no plugin %q", plugin)
	}
	if !on && d.Core {
		return fmt.Errorf("%s is a core plugin and cannot be disabled", d.ID)
	}
	return r.update(d, func(ps *PluginSettings) { ps.Disabled = !on })
}

// legacyIDs are the legacy ids of d whose settings and preferences carry
// over to it: those no document actually has. A plugin installed under an
// old id keeps its own settings (the legacy mapping never hides it), and a
// document cannot read or clear another's by listing its id.
func (r *Registry) legacyIDs(d *Document) []string {
	if d.Plugin == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for _, old := range d.Plugin.Legacy.IDs {
		if _, live := r.docs[old]; !live {
			out = append(out, old)
		}
	}
	return out
}
