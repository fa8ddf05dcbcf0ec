package registry

import (
	"context"
	"fmt"

	"github.com/pkuinfo/harness/manifest"
)

// SettingsPlugin is the plugin the settings tools are grouped under.
var SettingsPlugin = NativePlugin{
	ID:          "settings",
	Name:        "Settings",
	Description: "The documents' preferences, read and changed through the registry.",
	Instructions: "Use settings__list to see the plugins' preferences (key plugin.name, title, kind, options, schema, value) " +
		"and settings__change to change one when the user asks; the value must fit the schema " +
		"(a choice is one of the options' values, a list is a list of strings). settings__set is its old name.",
}

// SettingsTools are native tools through which the agent reads (a read
// tool) and changes (a write tool, so it asks by default) the documents'
// preferences. A host adds them with AddNative(SettingsPlugin, SettingsTools(r)...).
func SettingsTools(r *Registry) []NativeTool {
	return []NativeTool{settingsList{r}, settingsSet{r, "change"}, settingsSet{r, "set"}}
}

type settingsList struct{ r *Registry }

func (settingsList) Name() string { return "list" }
func (settingsList) Description() string {
	return "Lists every plugin's preferences: key (plugin.name), title, kind (choice, boolean, text or list), options ({value, label}), " +
		"JSON Schema, default and current value."
}
func (settingsList) Effect() manifest.Effect { return manifest.Read }
func (settingsList) InputSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"plugin": map[string]any{"type": "string", "description": "only this plugin's preferences"},
	}, "additionalProperties": false}
}
func (s settingsList) Run(ctx context.Context, in map[string]any) (any, error) {
	all, err := s.r.Preferences()
	if err != nil {
		return nil, err
	}
	plugin, _ := in["plugin"].(string)
	out := []Setting{}
	for _, x := range all {
		if plugin == "" || x.Plugin == plugin {
			out = append(out, x)
		}
	}
	return out, nil
}

// settingsSet is settings__change (the reference's name), and settings__set,
// its old name, kept for clients that still call it.
type settingsSet struct {
	r    *Registry
	name string
}

func (s settingsSet) Name() string { return s.name }
func (s settingsSet) Description() string {
	d := "Changes one preference, by key plugin.name, to a value that fits its schema; a null value returns to the default."
	if s.name != "change" {
		d = "The old name of settings__change: " + d
	}
	return d
}
func (settingsSet) Effect() manifest.Effect { return manifest.Write }
func (settingsSet) InputSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"key":   map[string]any{"type": "string", "description": "plugin.name, as settings__list gives it"},
		"value": map[string]any{"description": "the new value; null for the default"},
	}, "required": []any{"key", "value"}, "additionalProperties": false}
}
func (s settingsSet) Run(ctx context.Context, in map[string]any) (any, error) {
	key, _ := in["key"].(string)
	if err := s.r.SetPref(key, in["value"]); err != nil {
		return nil, err
	}
	cur, err := s.r.Pref(key)
	if err != nil {
		return nil, fmt.Errorf("%s was set but cannot be read back: %v", key, err)
	}
	return cur, nil
}
