package manifest

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// Effect is what a tool does to the world, in increasing strength.
type Effect string

// The effects, weakest first.
const (
	Read   Effect = "read"
	Write  Effect = "write"
	Money  Effect = "money"
	Public Effect = "public"
)

// Effects lists the effects from weakest to strongest.
var Effects = []Effect{Read, Write, Money, Public}

// Rank orders effects: read 0 < write 1 < money 2 < public 3; -1 if unknown.
func (e Effect) Rank() int { return slices.Index(Effects, e) }

// Mode is a permission mode for an effect.
type Mode string

// The modes.
const (
	Auto Mode = "auto"
	Ask  Mode = "ask"
	Off  Mode = "off"
)

// Plugin is a parsed document. Positions point into its files.
type Plugin struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     string `json:"version"`
	Icon        string `json:"icon,omitempty"`
	Author      string `json:"author,omitempty"`
	Homepage    string `json:"homepage,omitempty"`
	License     string `json:"license,omitempty"`
	// MaxAgentSteps is the agent's step budget the plugin asks for (0:
	// the host's); Core marks a plugin that cannot be turned off, which
	// the registry honours for a bundled official document only.
	MaxAgentSteps int  `json:"maxAgentSteps,omitempty"`
	Core          bool `json:"core,omitempty"`

	Requires     []string        `json:"requires,omitempty"`
	Access       Access          `json:"access"`
	DataSources  []DataSource    `json:"dataSources,omitempty"`
	Preferences  []Preference    `json:"preferences,omitempty"`
	Contributes  Contributes     `json:"contributes"`
	I18n         map[string]I18n `json:"i18n,omitempty"`
	Legacy       Legacy          `json:"legacy"`
	DefaultModes map[Effect]Mode `json:"defaultModes,omitempty"`
	Instructions string          `json:"instructions"`
	Tools        []*Tool         `json:"tools"`
	// Broken names the tools defined whose text does not parse, or is
	// not a tool: each has its error, and nothing is reported about them again.
	Broken  map[string]bool   `json:"-"`
	Widgets map[string][]byte `json:"-"` // name -> JSON, from widgets/*.json and fenced blocks
	Tests   []*Block          `json:"-"` // tests/*.yaml files and fenced test blocks
	Files   Files             `json:"-"`

	Pos    diag.Pos            `json:"-"` // the front matter's start
	KeyPos map[string]diag.Pos `json:"-"` // where each front-matter key is
}

// Defines reports whether the document defines tool name, counting a tool
// whose file does not parse (its error is reported once; what names it is
// not reported again).
func (p *Plugin) Defines(name string) bool { return p.Tool(name) != nil || p.Broken[name] }

// Tool returns the tool with that name.
func (p *Plugin) Tool(name string) *Tool {
	for _, t := range p.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// HasAbility reports whether the document declares an ability.
func (p *Plugin) HasAbility(a string) bool { return slices.Contains(p.Access.Abilities, a) }

// Access is what a document declares it may reach. It is declared, never
// inferred, and it is what review diffs.
type Access struct {
	Campus    []CampusAccess `json:"campus"`
	Web       []Origin       `json:"web"`
	Abilities []string       `json:"abilities"`
}

// CampusAccess is one campus service, optionally narrowed to path prefixes
// (empty Paths: any path of the service).
type CampusAccess struct {
	Service string   `json:"service"`
	Paths   []string `json:"paths,omitempty"`
	Pos     diag.Pos `json:"-"`
}

// Service returns the declared access for a campus service.
func (a Access) Service(name string) (CampusAccess, bool) {
	for _, c := range a.Campus {
		if c.Service == name {
			return c, true
		}
	}
	return CampusAccess{}, false
}

// Origin is a public web origin, normalised: lower-case host without a
// trailing dot, and the port even when it is the scheme's default.
type Origin struct {
	Scheme string   `json:"scheme"`
	Host   string   `json:"host"`
	Port   int      `json:"port"`
	Pos    diag.Pos `json:"-"`
}

// String renders the origin as scheme://host[:port], without a default port.
func (o Origin) String() string {
	s := o.Scheme + "://" + bracket(o.Host)
	if !(o.Scheme == "https" && o.Port == 443) && !(o.Scheme == "http" && o.Port == 80) {
		s += ":" + strconv.Itoa(o.Port)
	}
	return s
}

func bracket(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// DataSource is data a widget or a scheduled check reads: a read tool's
// result with fixed arguments, cached for TTLMs milliseconds.
type DataSource struct {
	Name  string         `json:"name"`
	Title string         `json:"title,omitempty"`
	Tool  string         `json:"tool"`
	Args  map[string]any `json:"args,omitempty"`
	TTLMs int64          `json:"ttlMs"`
	Pos   diag.Pos       `json:"-"`
}

// Preference is a user setting of the document, readable by steps as $prefs.
type Preference struct {
	Name        string             `json:"name"`
	Kind        string             `json:"kind"` // choice | boolean | text | list (or number | integer)
	Title       string             `json:"title"`
	Description string             `json:"description,omitempty"`
	Options     []Option           `json:"options,omitempty"`
	Screen      string             `json:"screen,omitempty"` // the contributes.screens key of the screen that shows it
	Default     any                `json:"default,omitempty"`
	Schema      map[string]any     `json:"schema"` // JSON Schema of the value (from kind, plus any given)
	Compiled    *jsonschema.Schema `json:"-"`
	Pos         diag.Pos           `json:"-"`
}

// Option is one allowed value of a preference and what the user reads.
type Option struct {
	Value any    `json:"value"` // a string (a number or boolean only in the old plain form)
	Label string `json:"label"`
}

// Contributes is what the document adds to the app's surfaces.
type Contributes struct {
	Widgets  []Widget     `json:"widgets,omitempty"`
	Screens  []Screen     `json:"screens,omitempty"`
	Settings []SettingRow `json:"settings,omitempty"`
	Commands []Command    `json:"commands,omitempty"`
}

// Widget is a generative-UI card fed by a data source.
type Widget struct {
	Key        string   `json:"key"`
	Title      string   `json:"title"`
	DataSource string   `json:"dataSource,omitempty"`
	Template   string   `json:"template"` // a widget block or widgets/NAME.json
	Pos        diag.Pos `json:"-"`
}

// Screen is a full page built from a widget template.
type Screen struct {
	Key      string   `json:"key"`
	Title    string   `json:"title"`
	Template string   `json:"template"`
	Pos      diag.Pos `json:"-"`
}

// SettingRow is a row on the plugin's settings page: a preference, or a
// link that runs a user tool.
type SettingRow struct {
	Key        string   `json:"key"`
	Title      string   `json:"title"`
	Preference string   `json:"preference,omitempty"`
	Tool       string   `json:"tool,omitempty"`
	Pos        diag.Pos `json:"-"`
}

// Command is a quick action the user can invoke (a tool with fixed input).
type Command struct {
	Key   string         `json:"key"`
	Title string         `json:"title"`
	Tool  string         `json:"tool"`
	Input map[string]any `json:"input,omitempty"`
	Pos   diag.Pos       `json:"-"`
}

// I18n holds translations for one language: the reference's
// PluginTranslation. Each map is keyed as the reference keys it.
type I18n struct {
	Name        string              `json:"name,omitempty"`
	Description string              `json:"description,omitempty"`
	Tools       map[string]ToolI18n `json:"tools,omitempty"`
	Widgets     map[string]I18nText `json:"widgets,omitempty"`     // contributes.widgets key -> {title, description}
	Screens     map[string]I18nText `json:"screens,omitempty"`     // contributes.screens key -> {title}
	Settings    map[string]I18nText `json:"settings,omitempty"`    // contributes.settings key -> {title, subtitle}
	Preferences map[string]I18nText `json:"preferences,omitempty"` // name -> {title, description, options}
	Commands    map[string]I18nText `json:"commands,omitempty"`    // contributes.commands key -> {description, argHint, aliases, prompt}
	DataSources map[string]I18nText `json:"dataSources,omitempty"` // name -> {title}
	Scopes      map[string]string   `json:"scopes,omitempty"`      // access entry as written -> prose
}

// I18nText is one translated item; each section has some of the keys.
type I18nText struct {
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Subtitle    string            `json:"subtitle,omitempty"`
	Options     map[string]string `json:"options,omitempty"` // a preference's option labels by value
	ArgHint     string            `json:"argHint,omitempty"`
	Aliases     []string          `json:"aliases,omitempty"`
	Prompt      string            `json:"prompt,omitempty"`
}

// ToolI18n is a tool's translated title. Its description is never
// translated: the key is read and ignored with a warning.
type ToolI18n struct {
	Title string `json:"title,omitempty"`
}

// Legacy maps identifiers of older releases to the current ones.
type Legacy struct {
	IDs     []string          `json:"pluginIds,omitempty"` // old plugin ids (legacy.pluginIds)
	Tools   map[string]string `json:"tools,omitempty"`     // old tool name (or old-id.tool) -> tool name
	Widgets map[string]string `json:"widgets,omitempty"`   // old widget key -> key
}

// Tool is one tool of the document. Its steps stay raw YAML nodes here: the
// steps package decodes them against its registry.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Effect      Effect `json:"effect"`
	Untrusted   bool   `json:"untrusted"`
	UserOnly    bool   `json:"userOnly"`
	AlwaysAsk   bool   `json:"alwaysAsk"`
	Serial      bool   `json:"serial"`
	// Grant is the reference's grant tool (grant: true): its approval
	// offers once or always. It grants nothing by itself.
	Grant bool `json:"grant,omitempty"`
	// Destructive marks a tool that deletes, cancels or overwrites (an
	// MCP client's destructiveHint); a write that only adds is not.
	Destructive bool `json:"destructive,omitempty"`
	// Idempotent marks a tool whose repeated call with the same input has
	// no further effect (an MCP client's idempotentHint); reads are.
	Idempotent  bool               `json:"idempotent,omitempty"`
	Input       map[string]any     `json:"input"`
	InputSchema *jsonschema.Schema `json:"-"`
	Output      map[string]any     `json:"output,omitempty"`

	Steps  *yaml.Node `json:"-"` // the steps list
	Limits *yaml.Node `json:"-"` // optional per-tool limits, decoded by the interpreter
	Doc    *yamlx.Doc `json:"-"` // maps node positions to the file
	File   string     `json:"file"`
	Pos    diag.Pos   `json:"-"`
}

// Block is a YAML or JSON text from a file or a fenced block of PLUGIN.md.
type Block struct {
	Kind string     // tool, widget, test
	Name string     // from the file name or the info string
	Doc  *yamlx.Doc // parsed YAML (nil for JSON)
	Text []byte
	Pos  diag.Pos
}
