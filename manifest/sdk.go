package manifest

import (
	"fmt"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

// Bounds on the SDK fields.
const (
	MinTTL        = 30        // seconds
	MaxTTL        = 7 * 86400 // seconds
	MaxListLength = 64        // data sources, preferences, widgets, …
)

// list reads a sequence of mappings, calling each for every item.
func list(d *yamlx.Doc, n *yaml.Node, what string, l *diag.List, each func(*yaml.Node)) {
	if n == nil || n.Kind != yaml.SequenceNode {
		l.Errorf(d.NodePos(n), "%s must be a list, not %s", what, yamlx.Describe(n))
		return
	}
	if len(n.Content) > MaxListLength {
		l.Errorf(d.NodePos(n), "%s has more than %d items", what, MaxListLength)
		return
	}
	for _, it := range n.Content {
		each(it)
	}
}

// keyed reads the mandatory key field of an item and checks its form and
// uniqueness.
func keyed(d *yamlx.Doc, m *yamlx.Map, field, what string, seen map[string]bool, l *diag.List) (string, bool) {
	f, ok := m.Get(field)
	if !ok {
		l.Errorf(d.NodePos(m.Node), "%s needs %q", what, field)
		return "", false
	}
	s, ok := d.String(f.Value, field, l)
	if !ok {
		return "", false
	}
	if !keyRE.MatchString(s) || len(s) > 40 {
		l.Errorf(d.NodePos(f.Value), "%s %q must match [a-z][A-Za-z0-9_-]* (at most 40 characters)", field, s)
		return "", false
	}
	if seen[s] {
		l.Errorf(d.NodePos(f.Value), "%s %q is used twice", field, s)
		return "", false
	}
	seen[s] = true
	return s, true
}

func optString(d *yamlx.Doc, m *yamlx.Map, key string, l *diag.List) string {
	f, ok := m.Get(key)
	if !ok {
		return ""
	}
	s, _ := d.String(f.Value, key, l)
	if err := checkText(s, key == "description"); err != nil {
		l.Errorf(d.OffsetPos(f.Value, err.Off), "%s %v", key, err)
	}
	return s
}

func optObject(d *yamlx.Doc, m *yamlx.Map, key string, l *diag.List) map[string]any {
	f, ok := m.Get(key)
	if !ok {
		return nil
	}
	if f.Value.Kind != yaml.MappingNode {
		l.Errorf(d.NodePos(f.Value), "%s must be a mapping", key)
		return nil
	}
	v, _ := d.Value(f.Value, l)
	obj, _ := v.(map[string]any)
	return obj
}

func parseDataSources(d *yamlx.Doc, n *yaml.Node, l *diag.List) []DataSource {
	var out []DataSource
	seen := map[string]bool{}
	list(d, n, "dataSources", l, func(it *yaml.Node) {
		m, ok := d.Mapping(it, "a data source", []string{"name", "tool", "input", "ttl", "title"}, l)
		if !ok {
			return
		}
		ds := DataSource{Pos: d.NodePos(it), TTL: 300}
		if ds.Name, ok = keyed(d, m, "name", "a data source", seen, l); !ok {
			return
		}
		f, ok := m.Get("tool")
		if !ok {
			l.Errorf(ds.Pos, "data source %q needs \"tool\" (a read tool of this document)", ds.Name)
			return
		}
		ds.Tool, _ = d.String(f.Value, "tool", l)
		ds.Input = optObject(d, m, "input", l)
		ds.Title = optString(d, m, "title", l)
		if f, ok := m.Get("ttl"); ok {
			if v, ok := d.Int(f.Value, "ttl (seconds)", l); ok {
				if v < MinTTL || v > MaxTTL {
					l.Errorf(d.NodePos(f.Value), "ttl must be between %d and %d seconds", MinTTL, MaxTTL)
				}
				ds.TTL = v
			}
		}
		out = append(out, ds)
	})
	return out
}

// PreferenceKinds maps a preference kind to its JSON Schema type.
var PreferenceKinds = map[string]string{"string": "string", "number": "number", "integer": "integer", "boolean": "boolean", "enum": ""}

func parsePreferences(d *yamlx.Doc, n *yaml.Node, sc *schemaCompiler, l *diag.List) []Preference {
	var out []Preference
	seen := map[string]bool{}
	list(d, n, "preferences", l, func(it *yaml.Node) {
		m, ok := d.Mapping(it, "a preference", []string{"name", "kind", "title", "description", "default", "schema", "options"}, l)
		if !ok {
			return
		}
		pr := Preference{Pos: d.NodePos(it)}
		if pr.Name, ok = keyed(d, m, "name", "a preference", seen, l); !ok {
			return
		}
		f, ok := m.Get("kind")
		if !ok {
			l.Errorf(pr.Pos, "preference %q needs \"kind\" (string, number, integer, boolean or enum)", pr.Name)
			return
		}
		pr.Kind, _ = d.String(f.Value, "kind", l)
		typ, known := PreferenceKinds[pr.Kind]
		if !known {
			l.Errorf(d.NodePos(f.Value), "preference kind %q must be string, number, integer, boolean or enum", pr.Kind)
			return
		}
		pr.Title = optString(d, m, "title", l)
		if pr.Title == "" {
			l.Errorf(pr.Pos, "preference %q needs a \"title\" the user reads", pr.Name)
		}
		pr.Description = optString(d, m, "description", l)
		schema := optObject(d, m, "schema", l)
		if schema == nil {
			schema = map[string]any{}
		}
		if typ != "" {
			if t, ok := schema["type"]; ok && t != typ {
				l.Errorf(pr.Pos, "preference %q: schema type %v disagrees with kind %s", pr.Name, t, pr.Kind)
			}
			schema["type"] = typ
		}
		if f, ok := m.Get("options"); ok {
			opts, _ := d.Value(f.Value, l)
			if arr, ok := opts.([]any); !ok || len(arr) == 0 {
				l.Errorf(d.NodePos(f.Value), "options must be a non-empty list")
			} else {
				schema["enum"] = arr
			}
		} else if pr.Kind == "enum" {
			if _, ok := schema["enum"]; !ok {
				l.Errorf(pr.Pos, "enum preference %q needs \"options\"", pr.Name)
			}
		}
		pr.Schema = schema
		pos := pr.Pos
		if f, ok := m.Get("schema"); ok {
			pos = d.NodePos(f.Value)
		}
		pr.Compiled = sc.compileAt(fmt.Sprintf("preference %s", pr.Name), schema, d, nil, pos, l)
		if f, ok := m.Get("default"); ok {
			pr.Default, _ = d.Value(f.Value, l)
			if pr.Compiled != nil {
				if err := pr.Compiled.Validate(pr.Default); err != nil {
					l.Errorf(d.NodePos(f.Value), "the default does not fit the preference's schema: %s", SchemaMessage(err))
				}
			}
		}
		out = append(out, pr)
	})
	return out
}

func parseContributes(d *yamlx.Doc, n *yaml.Node, l *diag.List) Contributes {
	var c Contributes
	m, ok := d.Mapping(n, "contributes", []string{"widgets", "screens", "settings", "commands"}, l)
	if !ok {
		return c
	}
	seen := map[string]bool{}
	if f, ok := m.Get("widgets"); ok {
		list(d, f.Value, "contributes.widgets", l, func(it *yaml.Node) {
			im, ok := d.Mapping(it, "a widget", []string{"key", "title", "dataSource", "template"}, l)
			if !ok {
				return
			}
			w := Widget{Pos: d.NodePos(it)}
			if w.Key, ok = keyed(d, im, "key", "a widget", seen, l); !ok {
				return
			}
			w.Title = optString(d, im, "title", l)
			w.DataSource = optString(d, im, "dataSource", l)
			w.Template = optString(d, im, "template", l)
			if w.Template == "" {
				w.Template = w.Key
			}
			c.Widgets = append(c.Widgets, w)
		})
	}
	if f, ok := m.Get("screens"); ok {
		list(d, f.Value, "contributes.screens", l, func(it *yaml.Node) {
			im, ok := d.Mapping(it, "a screen", []string{"key", "title", "template"}, l)
			if !ok {
				return
			}
			s := Screen{Pos: d.NodePos(it)}
			if s.Key, ok = keyed(d, im, "key", "a screen", seen, l); !ok {
				return
			}
			s.Title = optString(d, im, "title", l)
			s.Template = optString(d, im, "template", l)
			if s.Template == "" {
				s.Template = s.Key
			}
			c.Screens = append(c.Screens, s)
		})
	}
	if f, ok := m.Get("settings"); ok {
		list(d, f.Value, "contributes.settings", l, func(it *yaml.Node) {
			im, ok := d.Mapping(it, "a settings row", []string{"key", "title", "preference", "tool"}, l)
			if !ok {
				return
			}
			r := SettingRow{Pos: d.NodePos(it)}
			if r.Key, ok = keyed(d, im, "key", "a settings row", seen, l); !ok {
				return
			}
			r.Title = optString(d, im, "title", l)
			r.Preference = optString(d, im, "preference", l)
			r.Tool = optString(d, im, "tool", l)
			if (r.Preference == "") == (r.Tool == "") {
				l.Errorf(r.Pos, "settings row %q names either a preference or a tool", r.Key)
			}
			c.Settings = append(c.Settings, r)
		})
	}
	if f, ok := m.Get("commands"); ok {
		list(d, f.Value, "contributes.commands", l, func(it *yaml.Node) {
			im, ok := d.Mapping(it, "a command", []string{"key", "title", "tool", "input"}, l)
			if !ok {
				return
			}
			cmd := Command{Pos: d.NodePos(it)}
			if cmd.Key, ok = keyed(d, im, "key", "a command", seen, l); !ok {
				return
			}
			cmd.Title = optString(d, im, "title", l)
			cmd.Tool = optString(d, im, "tool", l)
			if cmd.Tool == "" {
				l.Errorf(cmd.Pos, "command %q needs \"tool\"", cmd.Key)
			}
			cmd.Input = optObject(d, im, "input", l)
			c.Commands = append(c.Commands, cmd)
		})
	}
	return c
}

func parseI18n(d *yamlx.Doc, n *yaml.Node, l *diag.List) map[string]I18n {
	out := map[string]I18n{}
	m, ok := d.Mapping(n, "i18n", []string{"en"}, l)
	if !ok {
		return out
	}
	for _, f := range m.Fields {
		im, ok := d.Mapping(f.Value, "i18n."+f.Key, []string{"name", "description", "tools", "widgets", "preferences"}, l)
		if !ok {
			continue
		}
		t := I18n{Name: optString(d, im, "name", l), Description: optString(d, im, "description", l)}
		if tf, ok := im.Get("tools"); ok {
			tm, ok := d.Mapping(tf.Value, "i18n."+f.Key+".tools", nil, l)
			if ok {
				t.Tools = map[string]ToolI18n{}
				for _, tt := range tm.Fields {
					x, ok := d.Mapping(tt.Value, "a tool's translation", []string{"title", "description"}, l)
					if !ok {
						continue
					}
					if df, ok := x.Get("description"); ok {
						l.Warnf(d.NodePos(df.KeyN), "i18n.%s.tools.%s.description is ignored: a tool's description is never translated; "+
							"write it once, in English or Chinese, in the tool's file", f.Key, tt.Key)
					}
					t.Tools[tt.Key] = ToolI18n{Title: optString(d, x, "title", l)}
				}
			}
		}
		if wf, ok := im.Get("widgets"); ok {
			t.Widgets, _ = d.StringMap(wf.Value, "i18n widgets", l)
		}
		if pf, ok := im.Get("preferences"); ok {
			t.Preferences, _ = d.StringMap(pf.Value, "i18n preferences", l)
		}
		out[f.Key] = t
	}
	return out
}

func parseLegacy(d *yamlx.Doc, n *yaml.Node, l *diag.List) Legacy {
	var lg Legacy
	m, ok := d.Mapping(n, "legacy", []string{"ids", "tools", "widgets"}, l)
	if !ok {
		return lg
	}
	if f, ok := m.Get("ids"); ok {
		lg.IDs, _ = d.Strings(f.Value, "legacy.ids", l)
		for i, id := range lg.IDs {
			if !idRE.MatchString(id) || len(id) > MaxIDLen {
				l.Errorf(d.NodePos(f.Value.Content[i]), "legacy id %q must match [a-z][a-z0-9-]*", id)
			} else if why := Reserved(id); why != "" {
				l.Errorf(d.NodePos(f.Value.Content[i]), "legacy id %q is %s: a document cannot claim it", id, why)
			}
		}
	}
	if f, ok := m.Get("tools"); ok {
		lg.Tools, _ = d.StringMap(f.Value, "legacy.tools", l)
	}
	if f, ok := m.Get("widgets"); ok {
		lg.Widgets, _ = d.StringMap(f.Value, "legacy.widgets", l)
	}
	return lg
}
