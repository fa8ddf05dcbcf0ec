package manifest

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

// Bounds on the SDK fields.
const (
	MinTTL        = 30        // seconds
	MaxTTL        = 7 * 86400 // seconds
	MaxListLength = 64        // data sources, preferences, widgets, …
)

// dataSourceDecl, preferenceDecl, contributesDecl (with its four item
// kinds), i18nDecl and legacyDecl declare the SDK's parts of the front
// matter.
var dataSourceDecl = &yamlx.Decl{Name: "a data source", Fields: []yamlx.Field{
	{Name: "name", Type: keyWord, Required: true, Doc: "Unique among the data sources; widgets name it."},
	{Name: "tool", Type: prose{}, Required: true, Doc: "A read tool of this document, not userOnly."},
	{Name: "input", Type: jsonObject{}, Doc: "The tool's input; it must fit the tool's input schema."},
	{Name: "ttl", Type: yamlx.Int{Min: MinTTL, Max: MaxTTL}, Default: int64(300), Doc: "Seconds the result is cached."},
	{Name: "title", Type: prose{}, Doc: "What people see."},
}}

// PreferenceKinds maps a preference kind to its JSON Schema type.
var PreferenceKinds = map[string]string{"string": "string", "number": "number", "integer": "integer", "boolean": "boolean", "enum": ""}

var preferenceDecl = &yamlx.Decl{Name: "a preference", Fields: []yamlx.Field{
	{Name: "name", Type: keyWord, Required: true, Doc: "Steps read the value as $prefs.NAME."},
	{Name: "kind", Type: choice{[]string{"string", "number", "integer", "boolean", "enum"}, "must be string, number, integer, boolean or enum"},
		Required: true, Doc: "The value's type; enum takes its values from options."},
	{Name: "title", Type: prose{}, Required: true, Doc: "What the user reads."},
	{Name: "description", Type: prose{Multiline: true}, Doc: "More words for the user."},
	{Name: "default", Type: yamlx.Any{}, Doc: "The value until the user sets one; it must fit the schema."},
	{Name: "schema", Type: jsonObject{}, Doc: "More JSON Schema keywords of the value (minimum, maxLength, …)."},
	{Name: "options", Type: nonEmptyList{}, Doc: "The allowed values (an enum's, or any kind's)."},
}}

var contributesDecl = &yamlx.Decl{Name: "contributes", Fields: []yamlx.Field{
	{Name: "widgets", Type: yamlx.Later{Of: yamlx.List{Of: yamlx.Object{Decl: widgetDecl}, Max: MaxListLength}}, Doc: "Generative-UI cards fed by a data source."},
	{Name: "screens", Type: yamlx.Later{Of: yamlx.List{Of: yamlx.Object{Decl: screenDecl}, Max: MaxListLength}}, Doc: "Full pages built from a widget template."},
	{Name: "settings", Type: yamlx.Later{Of: yamlx.List{Of: yamlx.Object{Decl: settingDecl}, Max: MaxListLength}}, Doc: "Rows of the plugin's settings page."},
	{Name: "commands", Type: yamlx.Later{Of: yamlx.List{Of: yamlx.Object{Decl: commandDecl}, Max: MaxListLength}}, Doc: "Quick actions: a tool with fixed input."},
}}

var (
	itemKey      = yamlx.Field{Name: "key", Type: keyWord, Required: true, Doc: "Unique across widgets, screens, settings and commands."}
	itemTitle    = yamlx.Field{Name: "title", Type: prose{}, Doc: "What people see."}
	itemTemplate = yamlx.Field{Name: "template", Type: prose{}, Doc: "widgets/NAME.json or a json widget NAME block (default: the key)."}
	widgetDecl   = &yamlx.Decl{Name: "a widget", Fields: []yamlx.Field{itemKey, itemTitle,
		{Name: "dataSource", Type: prose{}, Doc: "The data source that feeds it."}, itemTemplate}}
	screenDecl  = &yamlx.Decl{Name: "a screen", Fields: []yamlx.Field{itemKey, itemTitle, itemTemplate}}
	settingDecl = &yamlx.Decl{Name: "a settings row", Fields: []yamlx.Field{itemKey, itemTitle,
		{Name: "preference", Type: prose{}, Doc: "The preference the row sets (or tool)."},
		{Name: "tool", Type: prose{}, Doc: "The user tool the row runs (or preference)."}}}
	commandDecl = &yamlx.Decl{Name: "a command", Fields: []yamlx.Field{itemKey, itemTitle,
		{Name: "tool", Type: prose{}, Required: true, Doc: "The tool it runs."},
		{Name: "input", Type: jsonObject{}, Doc: "The tool's input; it must fit the tool's input schema."}}}
)

var i18nDecl = &yamlx.Decl{Name: "i18n", Fields: []yamlx.Field{
	{Name: "en", Type: yamlx.Object{Decl: &yamlx.Decl{Name: "i18n.en", Fields: []yamlx.Field{
		{Name: "name", Type: prose{}, Doc: "The document's name."},
		{Name: "description", Type: prose{Multiline: true}, Doc: "The document's description."},
		{Name: "tools", Type: yamlx.MapOf{Of: yamlx.Object{Decl: toolI18nDecl}}, Doc: "Tool titles by tool name."},
		{Name: "widgets", Type: yamlx.MapOf{Of: yamlx.String{}}, Doc: "Widget titles by key."},
		{Name: "preferences", Type: yamlx.MapOf{Of: yamlx.String{}}, Doc: "Preference titles by name."},
	}}}, Doc: "English texts."},
}}

var toolI18nDecl = &yamlx.Decl{Name: "a tool's translation", Fields: []yamlx.Field{
	{Name: "title", Type: prose{}, Doc: "The tool's title."},
	{Name: "description", Type: prose{Multiline: true}, Doc: "Ignored, with a warning: a tool's description is never translated."},
}}

var legacyDecl = &yamlx.Decl{Name: "legacy", Fields: []yamlx.Field{
	{Name: "ids", Type: yamlx.List{Of: word{RE: idRE, Max: MaxIDLen, Rule: "must match [a-z][a-z0-9-]*"}}, Doc: "Old plugin ids."},
	{Name: "tools", Type: yamlx.MapOf{Of: yamlx.String{}}, Doc: "Old tool names (or old-id.tool) to current tool names."},
	{Name: "widgets", Type: yamlx.MapOf{Of: yamlx.String{}}, Doc: "Old widget keys to current keys."},
}}

// nonEmptyList is a non-empty list of JSON values.
type nonEmptyList struct{}

func (nonEmptyList) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		c.Errorf(n, "%s must be a non-empty list", what)
		return nil, false
	}
	return c.Doc.Value(n, c.L)
}
func (nonEmptyList) Schema(*yamlx.Gen) map[string]any {
	return map[string]any{"type": "array", "minItems": 1}
}
func (nonEmptyList) Name() string { return "list" }

// keyed checks that an item's key (or name) is unique among seen.
func keyed(c *yamlx.Ctx, o *yamlx.Obj, field string, seen map[string]bool) (string, bool) {
	s := o.String(field)
	if s == "" {
		return "", false
	}
	if seen[s] {
		c.Errorf(o.NodeOf(field), "%s %q is used twice", field, s)
		return "", false
	}
	seen[s] = true
	return s, true
}

func parseDataSources(c *yamlx.Ctx, fm *yamlx.Obj) []DataSource {
	var out []DataSource
	seen := map[string]bool{}
	list, nodes := items(c, fm, "dataSources")
	for i, o := range list {
		name, ok := keyed(c, o, "name", seen)
		if !ok || !o.Has("tool") {
			continue
		}
		out = append(out, DataSource{Pos: c.Doc.NodePos(nodes[i]), Name: name, Tool: o.String("tool"), TTL: o.Int("ttl"),
			Input: asObject(o.Value("input")), Title: o.String("title")})
	}
	return out
}

func asObject(v any) map[string]any { m, _ := v.(map[string]any); return m }

func parsePreferences(c *yamlx.Ctx, fm *yamlx.Obj, sc *schemaCompiler) []Preference {
	var out []Preference
	seen := map[string]bool{}
	d, l := c.Doc, c.L
	list, nodes := items(c, fm, "preferences")
	for i, o := range list {
		pr := Preference{Pos: d.NodePos(nodes[i]), Kind: o.String("kind"), Title: o.String("title"), Description: o.String("description")}
		var ok bool
		if pr.Name, ok = keyed(c, o, "name", seen); !ok || pr.Kind == "" {
			continue
		}
		if o.Has("title") && strings.TrimSpace(pr.Title) == "" {
			l.Errorf(pr.Pos, "preference %q needs a \"title\" the user reads", pr.Name)
		}
		schema := asObject(o.Value("schema"))
		if schema == nil {
			schema = map[string]any{}
		}
		if typ := PreferenceKinds[pr.Kind]; typ != "" {
			if t, ok := schema["type"]; ok && t != typ {
				l.Errorf(pr.Pos, "preference %q: schema type %v disagrees with kind %s", pr.Name, t, pr.Kind)
			}
			schema["type"] = typ
		}
		if opts, ok := o.Value("options").([]any); ok {
			schema["enum"] = opts
		} else if _, has := schema["enum"]; pr.Kind == "enum" && !has && o.NodeOf("options") == nil {
			l.Errorf(pr.Pos, "enum preference %q needs \"options\"", pr.Name)
		}
		pr.Schema = schema
		pos := pr.Pos
		if n := o.NodeOf("schema"); n != nil {
			pos = d.NodePos(n)
		}
		pr.Compiled = sc.compileAt(fmt.Sprintf("preference %s", pr.Name), schema, d, nil, pos, l)
		if v, set := o.Get("default"); set {
			pr.Default = v.Value
			if pr.Compiled != nil {
				if err := pr.Compiled.Validate(pr.Default); err != nil {
					l.Errorf(d.NodePos(v.Node), "the default does not fit the preference's schema: %s", SchemaMessage(err))
				}
			}
		}
		out = append(out, pr)
	}
	return out
}

func parseContributes(c *yamlx.Ctx, co *yamlx.Obj) Contributes {
	var out Contributes
	seen := map[string]bool{}
	pos := c.Doc.NodePos
	ws, wn := items(c, co, "widgets")
	for i, o := range ws {
		if key, ok := keyed(c, o, "key", seen); ok {
			out.Widgets = append(out.Widgets, Widget{Pos: pos(wn[i]), Key: key, Title: o.String("title"),
				DataSource: o.String("dataSource"), Template: cmp.Or(o.String("template"), key)})
		}
	}
	ss, sn := items(c, co, "screens")
	for i, o := range ss {
		if key, ok := keyed(c, o, "key", seen); ok {
			out.Screens = append(out.Screens, Screen{Pos: pos(sn[i]), Key: key, Title: o.String("title"), Template: cmp.Or(o.String("template"), key)})
		}
	}
	rs, rn := items(c, co, "settings")
	for i, o := range rs {
		if key, ok := keyed(c, o, "key", seen); ok {
			r := SettingRow{Pos: pos(rn[i]), Key: key, Title: o.String("title"), Preference: o.String("preference"), Tool: o.String("tool")}
			if (r.Preference == "") == (r.Tool == "") {
				c.L.Errorf(r.Pos, "settings row %q names either a preference or a tool", r.Key)
			}
			out.Settings = append(out.Settings, r)
		}
	}
	cs, cn := items(c, co, "commands")
	for i, o := range cs {
		if key, ok := keyed(c, o, "key", seen); ok && o.String("tool") != "" {
			out.Commands = append(out.Commands, Command{Pos: pos(cn[i]), Key: key, Title: o.String("title"), Tool: o.String("tool"),
				Input: asObject(o.Value("input"))})
		}
	}
	return out
}

func parseI18n(c *yamlx.Ctx, o *yamlx.Obj) map[string]I18n {
	out := map[string]I18n{}
	en := o.Obj("en")
	if en == nil {
		return out
	}
	t := I18n{Name: en.String("name"), Description: en.String("description"),
		Widgets: en.StringMap("widgets"), Preferences: en.StringMap("preferences")}
	if tools, ok := en.Value("tools").([]yamlx.Entry); ok {
		t.Tools = map[string]ToolI18n{}
		for _, e := range tools {
			x := e.Value.(*yamlx.Obj)
			if v, set := x.Get("description"); set {
				c.L.Warnf(c.Doc.NodePos(v.Key), "i18n.en.tools.%s.description is ignored: a tool's description is never translated; "+
					"write it once, in English or Chinese, in the tool's file", e.Key)
			}
			t.Tools[e.Key] = ToolI18n{Title: x.String("title")}
		}
	}
	out["en"] = t
	return out
}

func parseLegacy(c *yamlx.Ctx, o *yamlx.Obj) Legacy {
	lg := Legacy{IDs: o.Strings("ids"), Tools: o.StringMap("tools"), Widgets: o.StringMap("widgets")}
	for i, id := range lg.IDs {
		if why := Reserved(id); why != "" {
			c.Errorf(o.NodeOf("ids").Content[i], "legacy id %q is %s: a document cannot claim it", id, why)
		}
	}
	return lg
}
