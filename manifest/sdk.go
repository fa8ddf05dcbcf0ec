package manifest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

// Bounds on the SDK fields.
const (
	MinTTLMs      = 30_000         // 30 seconds
	MaxTTLMs      = 7 * 86_400_000 // 7 days
	MaxListLength = 64             // data sources, preferences, widgets, …
)

// dataSourceDecl, preferenceDecl, contributesDecl (with its four item
// kinds), i18nDecl and legacyDecl declare the SDK's parts of the front
// matter. dataSources is the reference's map NAME: {title, tool, args,
// ttlMs}; oldDataSourceDecl is an item of the list earlier releases read.
var (
	dsTitle = yamlx.Field{Name: "title", Type: prose{}, Required: true, Doc: "What people see."}
	dsTool  = yamlx.Field{Name: "tool", Type: prose{}, Required: true, Doc: "A read tool of this document, not userOnly."}
	dsArgs  = yamlx.Field{Name: "args", Type: jsonObject{}, Deprecated: []string{"input"}, Doc: "The tool's input object; it must fit the tool's input schema."}
	dsTTL   = yamlx.Field{Name: "ttlMs", Type: yamlx.Int{Min: MinTTLMs, Max: MaxTTLMs}, Required: true, Doc: "Milliseconds the result is cached.",
		Aliases: []yamlx.Alias{{Name: "ttl", Type: yamlx.Int{Min: MinTTLMs / 1000, Max: MaxTTLMs / 1000}, To: func(v any) any { return v.(int64) * 1000 }, Doc: "in seconds"}}}

	dataSourceDecl = &yamlx.Decl{Name: "a data source", Fields: []yamlx.Field{dsTitle, dsTool, dsArgs, dsTTL}}

	oldDataSourceDecl = &yamlx.Decl{Name: "a data source", Fields: []yamlx.Field{
		{Name: "name", Type: keyWord, Required: true, Doc: "Unique among the data sources; widgets name it."},
		dsTool, dsArgs, optional(dsTTL, int64(300_000)), optional(dsTitle, nil)}}

	dataSourcesType = yamlx.Keyed{Of: dataSourceDecl, By: "name", Key: keyWord, Max: MaxListLength, Old: oldDataSourceDecl}
)

// optional is f not required, with a default.
func optional(f yamlx.Field, def any) yamlx.Field {
	f.Required, f.Default = false, def
	return f
}

// PreferenceKinds are the plugin reference's preference kinds (choice: one
// of the options' values; text: a string; list: a list of strings), then
// the two this engine also reads that the reference lacks; OldPreferenceKinds
// are the old spellings of two of them.
var (
	PreferenceKinds    = []string{"choice", "boolean", "text", "list", "number", "integer"}
	OldPreferenceKinds = map[string]string{"enum": "choice", "string": "text"}
	prefTypes          = map[string]string{"choice": "string", "boolean": "boolean", "text": "string", "list": "array", "number": "number", "integer": "integer"}
)

var preferenceDecl = &yamlx.Decl{Name: "a preference", Fields: []yamlx.Field{
	{Name: "title", Type: prose{NonEmpty: true}, Required: true, Doc: "What the user reads."},
	{Name: "description", Type: prose{Multiline: true}, Doc: "More words for the user."},
	{Name: "kind", Type: yamlx.Enum{Values: PreferenceKinds, Rule: "must be choice, boolean, text or list", Old: OldPreferenceKinds}, Required: true,
		Doc: "choice: one of the options' values; boolean; text: a string; list: a list of strings (options restrict them). " +
			"number and integer are outside the plugin reference (a warning). Old spellings: enum (choice), string (text)."},
	{Name: "options", Type: yamlx.List{Of: yamlx.Short{Decl: optionDecl, Key: "value", Scalar: yamlx.SchemaPlus{Type: yamlx.Any{}, Extra: map[string]any{"type": []any{"string", "number", "boolean"}}},
		Hint: "write {value, label}"}, Min: 1}, Doc: "The allowed values, {value, label} each (a plain value is the old spelling)."},
	{Name: "screen", Type: keyWord, Doc: "The contributes.screens key of the screen that shows it (the app route /p/PLUGIN/KEY); default the first screen."},
	{Name: "default", Type: yamlx.Any{}, Doc: "The value until the user sets one; it must fit the schema."},
	{Name: "schema", Type: jsonObject{}, Doc: "More JSON Schema keywords of the value (minimum, maxLength, …)."},
}}

var optionDecl = &yamlx.Decl{Name: "an option", Fields: []yamlx.Field{
	{Name: "value", Type: yamlx.String{}, Required: true, Doc: "The value stored, a string."},
	{Name: "label", Type: prose{NonEmpty: true}, Required: true, Doc: "What the user reads."},
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

// i18nDecl is the reference's PluginTranslation (i18n.en); each section's
// keys name things the document has.
var i18nDecl = &yamlx.Decl{Name: "i18n", Fields: []yamlx.Field{
	{Name: "en", Type: yamlx.Object{Decl: &yamlx.Decl{Name: "i18n.en", Fields: []yamlx.Field{
		{Name: "name", Type: prose{}, Doc: "The document's name."},
		{Name: "description", Type: prose{Multiline: true}, Doc: "The document's description."},
		{Name: "tools", Type: yamlx.MapOf{Of: yamlx.Object{Decl: toolI18nDecl}}, Doc: "Tool titles by tool name."},
		{Name: "widgets", Type: yamlx.MapOf{Of: yamlx.Short{Decl: i18nItem("a widget's", trTitle, trDesc), Key: "title", Hint: "write {title: …}"}},
			Doc: "By contributes.widgets key (a plain string is the old spelling of {title})."},
		{Name: "screens", Type: yamlx.MapOf{Of: yamlx.Object{Decl: i18nItem("a screen's", trTitle)}}, Doc: "By contributes.screens key."},
		{Name: "settings", Type: yamlx.MapOf{Of: yamlx.Object{Decl: i18nItem("a settings row's", trTitle,
			yamlx.Field{Name: "subtitle", Type: prose{}, Doc: "The line under the title."})}}, Doc: "By contributes.settings key."},
		{Name: "preferences", Type: yamlx.MapOf{Of: yamlx.Short{Decl: i18nItem("a preference's", trTitle, trDesc,
			yamlx.Field{Name: "options", Type: yamlx.MapOf{Of: prose{}}, Doc: "Option labels by value."}), Key: "title", Hint: "write {title: …}"}},
			Doc: "By preference name (a plain string is the old spelling of {title})."},
		{Name: "commands", Type: yamlx.MapOf{Of: yamlx.Object{Decl: i18nItem("a command's",
			yamlx.Field{Name: "description", Type: prose{}, Doc: "What the command does (its title)."},
			yamlx.Field{Name: "argHint", Type: prose{}, Doc: "A hint for its argument."},
			yamlx.Field{Name: "aliases", Type: yamlx.List{Of: prose{NonEmpty: true}}, Doc: "Other names it answers to."},
			yamlx.Field{Name: "prompt", Type: prose{Multiline: true}, Doc: "The English template of a prompt command."})}}, Doc: "By contributes.commands key."},
		{Name: "dataSources", Type: yamlx.MapOf{Of: yamlx.Object{Decl: i18nItem("a data source's", trTitle)}}, Doc: "By data source name."},
		{Name: "scopes", Type: yamlx.MapOf{Of: prose{}}, Doc: "Access in prose, by the entry as written (a campus service or a web origin)."},
	}}}, Doc: "English texts."},
}}

var (
	trTitle = yamlx.Field{Name: "title", Type: prose{}, Doc: "The English title."}
	trDesc  = yamlx.Field{Name: "description", Type: prose{Multiline: true}, Doc: "The English description."}
)

func i18nItem(whose string, fields ...yamlx.Field) *yamlx.Decl {
	return &yamlx.Decl{Name: whose + " translation", Fields: fields}
}

var toolI18nDecl = &yamlx.Decl{Name: "a tool's translation", Fields: []yamlx.Field{
	{Name: "title", Type: prose{}, Doc: "The tool's title."},
	{Name: "description", Type: prose{Multiline: true}, Doc: "Ignored, with a warning: a tool's description is never translated."},
}}

var legacyDecl = &yamlx.Decl{Name: "legacy", Fields: []yamlx.Field{
	{Name: "pluginIds", Type: yamlx.List{Of: yamlx.String{Pattern: idRE, MaxLen: MaxIDLen, Rule: "must match [a-z][a-z0-9-]*", Label: "name"}}, Deprecated: []string{"ids"},
		Doc: "Old plugin ids now served by this plugin."},
	{Name: "tools", Type: yamlx.MapOf{Of: yamlx.String{}}, Doc: "Old tool ids (old-id.tool, or a tool name) to tool names of this plugin."},
	{Name: "widgets", Type: yamlx.MapOf{Of: yamlx.String{}}, Doc: "Old <plugin>.<widget> (or a widget key) to widget keys of this plugin."},
}}

func parseDataSources(c *yamlx.Ctx, fm *yamlx.Obj) []DataSource {
	var out []DataSource
	v, n, _ := c.Later(fm, "dataSources")
	for _, e := range asEntries(v) {
		o, pos := e.Value.(*yamlx.Obj), e.KeyN
		if n.Kind == yaml.SequenceNode {
			pos = e.Node // the old list's item
		}
		if o.Has("tool") {
			out = append(out, DataSource{Pos: c.Doc.NodePos(pos), Name: e.Key, Title: o.String("title"), Tool: o.String("tool"),
				Args: asObject(o.Value("args")), TTLMs: o.Int("ttlMs")})
		}
	}
	return out
}

func asObject(v any) map[string]any { m, _ := v.(map[string]any); return m }

func parsePreferences(c *yamlx.Ctx, fm *yamlx.Obj, sc *schemaCompiler, screens []Screen) []Preference {
	var out []Preference
	d, l := c.Doc, c.L
	v, n, _ := c.Later(fm, "preferences")
	entries, _ := v.([]yamlx.Entry)
	for _, e := range entries {
		o := e.Value.(*yamlx.Obj)
		pr := Preference{Pos: d.NodePos(e.KeyN), Name: e.Key, Kind: o.String("kind"), Title: o.String("title"), Description: o.String("description"),
			Screen: o.String("screen")}
		if n.Kind == yaml.SequenceNode {
			pr.Pos = d.NodePos(e.Node) // the old list form's item
		}
		if pr.Kind == "" {
			continue
		}
		if pr.Kind == "number" || pr.Kind == "integer" {
			l.Warnf(d.NodePos(o.NodeOf("kind")), "kind %q is outside the plugin reference (choice, boolean, text, list): a host that follows it may not offer the preference", pr.Kind)
		}
		if pr.Screen == "" && len(screens) > 0 {
			pr.Screen = screens[0].Key
		} else if pr.Screen != "" && !slices.ContainsFunc(screens, func(s Screen) bool { return s.Key == pr.Screen }) {
			l.Errorf(d.NodePos(o.NodeOf("screen")), "preference %q names screen %q, which contributes.screens does not define", pr.Name, pr.Screen)
		}
		schema := asObject(o.Value("schema"))
		if schema == nil {
			schema = map[string]any{}
		}
		opts, _ := o.Value("options").([]any)
		var values []any
		var nodes []*yaml.Node
		for i, x := range opts {
			if op, ok := x.(*yamlx.Obj); ok {
				nodes = append(nodes, o.NodeOf("options").Content[i])
				pr.Options = append(pr.Options, Option{Value: op.Value("value"), Label: cmp.Or(op.String("label"), fmt.Sprint(op.Value("value")))})
				values = append(values, op.Value("value"))
			}
		}
		typ := prefTypes[pr.Kind]
		if pr.Kind == "choice" && slices.ContainsFunc(values, func(v any) bool { _, s := v.(string); return !s }) {
			typ = "" // an old enum of numbers
		}
		if t, ok := schema["type"]; ok && typ != "" && t != typ {
			l.Errorf(pr.Pos, "preference %q: schema type %v disagrees with kind %s", pr.Name, t, pr.Kind)
		}
		if typ != "" {
			schema["type"] = typ
		}
		enum := schema
		if pr.Kind == "list" {
			if enum = asObject(schema["items"]); enum == nil {
				enum = map[string]any{}
			}
			enum["type"], schema["items"] = "string", enum
		}
		if values != nil {
			enum["enum"] = values
		} else if _, has := schema["enum"]; pr.Kind == "choice" && !has && o.NodeOf("options") == nil {
			l.Errorf(pr.Pos, "choice preference %q needs \"options\"", pr.Name)
		}
		pr.Schema = schema
		pos := pr.Pos
		if n := o.NodeOf("schema"); n != nil {
			pos = d.NodePos(n)
		}
		pr.Compiled = sc.compileAt(fmt.Sprintf("preference %s", pr.Name), schema, d, nil, pos, l)
		for i, x := range values {
			if pr.Kind == "list" {
				x = []any{x}
			}
			if pr.Compiled == nil {
				break
			}
			if err := pr.Compiled.Validate(x); err != nil {
				l.Errorf(d.NodePos(nodes[i]), "option %v does not fit the preference's schema: %s", values[i], SchemaMessage(err))
			}
		}
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

// Fit is a stored value as the preference takes it: v when it fits the
// schema, or, for a number or boolean stored before the kind became choice
// or text (an old integer kind), its text when that fits. ok is false when
// neither fits: the default applies.
func (p Preference) Fit(v any) (any, bool) {
	if p.Compiled == nil || p.Compiled.Validate(v) == nil {
		return v, true
	}
	switch v.(type) {
	case float64, int64, int, bool:
		if s := fmt.Sprint(v); (p.Kind == "choice" || p.Kind == "text") && p.Compiled.Validate(s) == nil {
			return s, true
		}
	}
	return nil, false
}

func parseContributes(c *yamlx.Ctx, co *yamlx.Obj) Contributes {
	var out Contributes
	seen := map[string]bool{}
	pos := c.Doc.NodePos
	ws, wn := items(c, co, "widgets")
	for i, o := range ws {
		if key, ok := c.Unique(o, "key", seen); ok {
			out.Widgets = append(out.Widgets, Widget{Pos: pos(wn[i]), Key: key, Title: o.String("title"),
				DataSource: o.String("dataSource"), Template: cmp.Or(o.String("template"), key)})
		}
	}
	ss, sn := items(c, co, "screens")
	for i, o := range ss {
		if key, ok := c.Unique(o, "key", seen); ok {
			out.Screens = append(out.Screens, Screen{Pos: pos(sn[i]), Key: key, Title: o.String("title"), Template: cmp.Or(o.String("template"), key)})
		}
	}
	rs, rn := items(c, co, "settings")
	for i, o := range rs {
		if key, ok := c.Unique(o, "key", seen); ok {
			r := SettingRow{Pos: pos(rn[i]), Key: key, Title: o.String("title"), Preference: o.String("preference"), Tool: o.String("tool")}
			if (r.Preference == "") == (r.Tool == "") {
				c.L.Errorf(r.Pos, "settings row %q names either a preference or a tool", r.Key)
			}
			out.Settings = append(out.Settings, r)
		}
	}
	cs, cn := items(c, co, "commands")
	for i, o := range cs {
		if key, ok := c.Unique(o, "key", seen); ok && o.String("tool") != "" {
			out.Commands = append(out.Commands, Command{Pos: pos(cn[i]), Key: key, Title: o.String("title"), Tool: o.String("tool"),
				Input: asObject(o.Value("input"))})
		}
	}
	return out
}

// parseI18n reads the translations after the rest of the front matter, so
// a key that names nothing the document has gets a warning (tool names are
// checked once the tools are read).
func parseI18n(c *yamlx.Ctx, o *yamlx.Obj, p *Plugin) map[string]I18n {
	out := map[string]I18n{}
	en := o.Obj("en")
	if en == nil {
		return out
	}
	t := I18n{Name: en.String("name"), Description: en.String("description"), Scopes: en.StringMap("scopes")}
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
	has := map[string][]string{
		"widgets":     keysOf(p.Contributes.Widgets, func(w Widget) string { return w.Key }),
		"screens":     keysOf(p.Contributes.Screens, func(s Screen) string { return s.Key }),
		"settings":    keysOf(p.Contributes.Settings, func(r SettingRow) string { return r.Key }),
		"commands":    keysOf(p.Contributes.Commands, func(cm Command) string { return cm.Key }),
		"dataSources": keysOf(p.DataSources, func(ds DataSource) string { return ds.Name }),
		"preferences": keysOf(p.Preferences, func(pr Preference) string { return pr.Name }),
		"scopes": append(keysOf(p.Access.Campus, func(ca CampusAccess) string { return ca.Service }),
			keysOf(p.Access.Web, Origin.String)...),
	}
	optionsOf := map[string][]string{}
	for _, pr := range p.Preferences {
		optionsOf[pr.Name] = keysOf(pr.Options, func(o Option) string { return fmt.Sprint(o.Value) })
	}
	known := func(section, key string, n *yaml.Node, names []string) bool {
		k := key
		if og, err := ParseOrigin(key); err == nil && section == "scopes" {
			k = og.String() // an origin as written
		}
		if slices.Contains(names, k) {
			return true
		}
		c.L.Warnf(c.Doc.NodePos(n), "i18n.en.%s names %q, which the document does not have%s", section, key, yamlx.DidYouMean(key, names))
		return false
	}
	sections := map[string]*map[string]I18nText{"widgets": &t.Widgets, "screens": &t.Screens, "settings": &t.Settings,
		"preferences": &t.Preferences, "commands": &t.Commands, "dataSources": &t.DataSources}
	for section, names := range has {
		entries, _ := en.Value(section).([]yamlx.Entry)
		for _, e := range entries {
			known(section, e.Key, e.KeyN, names)
			x, ok := e.Value.(*yamlx.Obj)
			if !ok {
				continue
			}
			tx := I18nText{Title: x.String("title"), Description: x.String("description"), Subtitle: x.String("subtitle"),
				ArgHint: x.String("argHint"), Aliases: x.Strings("aliases"), Prompt: x.String("prompt")}
			opts, _ := x.Value("options").([]yamlx.Entry)
			for _, op := range opts {
				if known("preferences."+e.Key+".options", op.Key, op.KeyN, optionsOf[e.Key]) {
					if tx.Options == nil {
						tx.Options = map[string]string{}
					}
					tx.Options[op.Key] = op.Value.(string)
				}
			}
			m := sections[section]
			if *m == nil {
				*m = map[string]I18nText{}
			}
			(*m)[e.Key] = tx
		}
	}
	out["en"] = t
	return out
}

func keysOf[T any](list []T, key func(T) string) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = key(x)
	}
	return out
}

func parseLegacy(c *yamlx.Ctx, o *yamlx.Obj) Legacy {
	lg := Legacy{IDs: o.Strings("pluginIds"), Tools: o.StringMap("tools"), Widgets: o.StringMap("widgets")}
	for i, id := range lg.IDs {
		if why := Reserved(id); why != "" {
			c.Errorf(o.NodeOf("pluginIds").Content[i], "legacy id %q is %s: a document cannot claim it", id, why)
		}
	}
	return lg
}
