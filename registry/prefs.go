package registry

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pkuinfo/harness/manifest"
)

// Setting is one preference of a document, listed as "<plugin>.<name>".
type Setting struct {
	Key         string            `json:"key"`
	Plugin      string            `json:"plugin"`
	Name        string            `json:"name"`
	Kind        string            `json:"kind"` // choice | boolean | text | list (or number | integer)
	Title       string            `json:"title"`
	Description string            `json:"description,omitempty"`
	Options     []manifest.Option `json:"options,omitempty"`
	Screen      string            `json:"screen,omitempty"` // the contributes.screens key that shows it
	Schema      map[string]any    `json:"schema"`
	Default     any               `json:"default,omitempty"`
	Value       any               `json:"value"`
	IsSet       bool              `json:"isSet"` // the user chose Value; else it is the default
}

// Preferences lists every document's preferences with their values,
// sorted by key.
func (r *Registry) Preferences() ([]Setting, error) {
	var out []Setting
	for _, d := range r.Documents() {
		if d.Plugin == nil {
			continue
		}
		stored, err := r.storedPrefs(d)
		if err != nil {
			return nil, err
		}
		for _, p := range d.Plugin.Preferences {
			out = append(out, setting(d, p, stored))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func setting(d *Document, p manifest.Preference, stored map[string]any) Setting {
	s := Setting{Key: d.ID + "." + p.Name, Plugin: d.ID, Name: p.Name, Kind: p.Kind, Title: p.Title,
		Description: p.Description, Options: p.Options, Screen: p.Screen, Schema: p.Schema, Default: p.Default, Value: p.Default}
	if v, ok := stored[p.Name]; ok {
		s.Value, s.IsSet = p.Fit(v)
		if !s.IsSet {
			s.Value = p.Default
		}
	}
	return s
}

// communityKey prefixes the id under which a community document's values
// are stored: an id is a name any document may take (a community document
// may stand in for a bundled one, or claim its id as a legacy id), so a
// community document never reads what the user set for an official one.
// A HomeStore keeps them in HOME/community/prefs/.
const communityKey = "community/"

// PrefsKey is the Store key of the values of document id with trust.
func PrefsKey(id string, trust Trust) string {
	if trust == Official {
		return id
	}
	return communityKey + id
}

// storedPrefs reads a document's stored values; values stored under a
// legacy id are carried over where the current id has none.
func (r *Registry) storedPrefs(d *Document) (map[string]any, error) {
	out, err := r.store.Prefs(PrefsKey(d.ID, d.Trust))
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[string]any{}
	}
	for _, old := range r.legacyIDs(d) {
		m, err := r.store.Prefs(PrefsKey(old, d.Trust))
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out, nil
}

func (r *Registry) preference(key string) (*Document, manifest.Preference, error) {
	plugin, name, ok := strings.Cut(key, ".")
	if !ok {
		return nil, manifest.Preference{}, fmt.Errorf("setting %q must be <plugin>.<name>", key)
	}
	d, ok := r.Document(plugin)
	if !ok || d.Plugin == nil {
		return nil, manifest.Preference{}, fmt.Errorf("no plugin %q", plugin)
	}
	for _, p := range d.Plugin.Preferences {
		if p.Name == name {
			return d, p, nil
		}
	}
	return nil, manifest.Preference{}, fmt.Errorf("plugin %s has no preference %q", d.ID, name)
}

// Pref returns one setting by key "<plugin>.<name>".
func (r *Registry) Pref(key string) (Setting, error) {
	d, p, err := r.preference(key)
	if err != nil {
		return Setting{}, err
	}
	stored, err := r.storedPrefs(d)
	if err != nil {
		return Setting{}, err
	}
	return setting(d, p, stored), nil
}

// MaxPrefBytes bounds one preference value as JSON: the agent may set any
// preference (a prompt-injected one too), and every value is stored and
// read on every call of the document.
const MaxPrefBytes = 16 << 10

// SetPref sets a preference after validating the value against its schema;
// a nil value goes back to the default.
func (r *Registry) SetPref(key string, v any) error {
	d, p, err := r.preference(key)
	if err != nil {
		return err
	}
	if v != nil {
		nv, err := normalize(map[string]any{"v": v})
		if err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
		v = nv["v"]
		if b, _ := json.Marshal(v); len(b) > MaxPrefBytes {
			return fmt.Errorf("%s: the value is larger than %d bytes: a preference is a setting, not a store (a document keeps data with kv_set)", key, MaxPrefBytes)
		}
		if p.Compiled != nil {
			if err := p.Compiled.Validate(v); err != nil {
				return fmt.Errorf("%s: the value does not fit: %s", key, manifest.SchemaMessage(err))
			}
		}
	}
	stored, err := r.storedPrefs(d)
	if err != nil {
		return err
	}
	if v == nil {
		delete(stored, p.Name)
	} else {
		stored[p.Name] = v
	}
	return r.store.SetPrefs(PrefsKey(d.ID, d.Trust), stored)
}

// prefValues is what a document's steps read as $prefs: every preference,
// the user's value or the default.
func (r *Registry) prefValues(d *Document) (map[string]any, error) {
	out := map[string]any{}
	if d.Plugin == nil {
		return out, nil
	}
	stored, err := r.storedPrefs(d)
	if err != nil {
		return nil, err
	}
	for _, p := range d.Plugin.Preferences {
		out[p.Name] = setting(d, p, stored).Value
	}
	return out, nil
}
