package manifest

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
)

var (
	versionRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	serviceRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)
)

// KnownRequires are the capabilities a host may grant, the plugin
// reference's Capability list; others are warned about.
var KnownRequires = []string{"network", "campus-network", "campus-session", "notifications", "background",
	"shell", "filesystem", "cloud", "phone-control", "ongoing"}

// OlderRequires are capabilities earlier releases of this engine knew that
// the reference does not have: still accepted, with a warning.
var OlderRequires = []string{"location", "calendar", "camera", "storage"}

// KnownAbilities are the host abilities a document may declare.
var KnownAbilities = []string{"kv", "notifications", "calendar", "location", "clipboard", "share", "open-url"}

// Text limits for what people and the model read, and the largest
// maxAgentSteps.
const (
	MaxAgentSteps     = 100
	MaxNameLen        = 80
	MaxDescriptionLen = 2000
)

// frontMatterDecl declares the front matter, and accessDecl, campusDecl
// and modesDecl its parts (sdk.go declares the SDK's): the decoder, the
// JSON Schema (docs/schema/plugin.schema.json) and the reference tables
// read them.
var frontMatterDecl = &yamlx.Decl{Name: "the front matter", Title: "PLUGIN.md front matter",
	Doc: "The manifest of a PKU harness plugin document (the YAML between the --- lines of PLUGIN.md). Reference: docs/plugin-format.md.",
	Fields: []yamlx.Field{
		{Name: "id", Type: idWord, Required: true,
			Doc: "The plugin id, [a-z][a-z0-9-]*: a tool's id is ID.TOOL. settings, host, harness and mcp-* are the host's."},
		{Name: "name", Type: prose{Max: MaxNameLen, NonEmpty: true}, Required: true, Doc: "The name people see."},
		{Name: "description", Type: prose{Max: MaxDescriptionLen, Multiline: true, NonEmpty: true}, Required: true,
			Doc: "What the document is for, for people and the model."},
		{Name: "version", Type: yamlx.String{Pattern: versionRE, Rule: "is not a semantic version like 1.0.0", Label: "semantic version"}, Required: true,
			Doc: "A semantic version, e.g. 1.0.0 (quote one that reads as a number)."},
		{Name: "icon", Type: prose{Max: 200}, Doc: "The document's icon: an icon name or a file of the document."},
		{Name: "maxAgentSteps", Type: yamlx.Int{Min: 1, Max: MaxAgentSteps}, Doc: "How many steps the agent may take in a turn that uses this plugin (a hint to the agent loop; it grants nothing)."},
		{Name: "core", Type: yamlx.Bool{}, Doc: "A plugin that cannot be turned off: honoured for a document bundled with the app as official, ignored (with a lint warning) otherwise."},
		{Name: "author", Type: prose{Max: MaxNameLen}, Doc: "Who wrote the document."},
		{Name: "homepage", Type: yamlx.SchemaPlus{Type: prose{Max: 300}, Extra: map[string]any{"pattern": "^https://"}}, Doc: "An https URL about the document."},
		{Name: "license", Type: prose{Max: 80}, Doc: "The license, e.g. MIT."},
		{Name: "requires", Type: yamlx.SchemaPlus{Type: yamlx.List{Of: yamlx.String{}}, Extra: map[string]any{"uniqueItems": true,
			"items": map[string]any{"type": "string", "pattern": serviceRE.String()}}},
			Doc: "Capabilities the host must grant: " + strings.Join(KnownRequires, ", ") + " (an unknown one is still a name)."},
		{Name: "access", Type: yamlx.Later{Of: yamlx.Object{Decl: accessDecl}}, Doc: "What the document may reach: declared, never inferred."},
		{Name: "dataSources", Type: yamlx.Later{Of: dataSourcesType},
			Doc: "Data a widget or a scheduled check reads, by name: a read tool's result, cached (a list of {name, tool, input, ttl, title} is the old form)."},
		{Name: "preferences", Type: yamlx.Later{Of: yamlx.Keyed{Of: preferenceDecl, By: "name", Key: keyWord, Max: MaxListLength}},
			Doc: "User settings by name, readable in steps as $prefs.NAME and by the agent as PLUGIN.NAME (never secrets)."},
		{Name: "contributes", Type: yamlx.Later{Of: yamlx.Object{Decl: contributesDecl}}, Doc: "What the document adds to the app: widgets, screens, settings rows, commands."},
		{Name: "i18n", Type: yamlx.Later{Of: yamlx.Object{Decl: i18nDecl}}, Doc: "English texts for the app's English interface."},
		{Name: "legacy", Type: yamlx.Later{Of: yamlx.Object{Decl: legacyDecl}}, Doc: "Identifiers of older releases, so settings and references carry over."},
		{Name: "defaultModes", Type: yamlx.Object{Decl: modesDecl}, Doc: "The permission mode per effect an official document starts with."},
	}}

// idWord is a plugin id, as the front matter and CheckID read it.
var idWord = yamlx.String{Pattern: idRE, MaxLen: MaxIDLen, Rule: fmt.Sprintf("must match [a-z][a-z0-9-]* and be at most %d characters", MaxIDLen), Label: "name"}

// ServiceName is a campus service's name, as access.campus and the
// proxy's services and secrets files write it.
var ServiceName = yamlx.String{Pattern: serviceRE, Rule: "must match [a-z][a-z0-9-]* (at most 40 characters)", Label: "name"}

var accessDecl = &yamlx.Decl{Name: "access", Fields: []yamlx.Field{
	{Name: "campus", Type: yamlx.Later{Of: yamlx.List{Of: yamlx.Either{Scalar: ServiceName, Mapping: yamlx.Object{Decl: campusDecl}}}},
		Doc: "Campus services by catalogue name: a name allows every path, {service, paths} only those prefixes."},
	{Name: "web", Type: yamlx.Later{Of: yamlx.List{Of: yamlx.SchemaPlus{Type: yamlx.String{}, Extra: map[string]any{"pattern": "^[hH][tT][tT][pP][sS]?://[^/?#@]+/?$"}}}},
		Doc: "Public origins, scheme://host[:port]: no user, path, query, fragment or wildcard."},
	{Name: "abilities", Type: yamlx.Later{Of: yamlx.SchemaPlus{Type: yamlx.List{Of: yamlx.Enum{Values: KnownAbilities, Rule: "is not an ability: " + strings.Join(KnownAbilities, ", ")}},
		Extra: map[string]any{"uniqueItems": true}}}, Doc: "Host abilities: kv is the plugin's private store."},
}}

var campusDecl = &yamlx.Decl{Name: "a campus service", Fields: []yamlx.Field{
	{Name: "service", Type: ServiceName, Required: true, Doc: "The service's catalogue name."},
	{Name: "paths", Type: yamlx.SchemaPlus{Type: yamlx.List{Of: yamlx.SchemaPlus{Type: yamlx.String{}, Extra: map[string]any{"pattern": "^/"}}}, Extra: map[string]any{"minItems": 1}},
		Doc: "Path prefixes the document may request (leave out: any path)."},
}}

var modeChoice = yamlx.Enum{Values: []string{"auto", "ask", "off"}, Rule: "must be auto, ask or off"}

var modesDecl = &yamlx.Decl{Name: "defaultModes", Fields: []yamlx.Field{
	{Name: "read", Type: modeChoice, Doc: "The mode of read tools."},
	{Name: "write", Type: modeChoice, Doc: "The mode of write tools."},
	{Name: "money", Type: modeChoice, Doc: "The mode of money tools."},
	{Name: "public", Type: modeChoice, Doc: "The mode of public tools."},
}}

func parseFrontMatter(p *Plugin, d *yamlx.Doc, sc *schemaCompiler, l *diag.List) {
	c := yamlx.NewCtx(d, l, nil)
	o, _ := c.Object(d.Root, frontMatterDecl)
	if o == nil {
		return
	}
	for i := 0; i+1 < len(d.Root.Content); i += 2 {
		p.KeyPos[d.Root.Content[i].Value] = d.NodePos(d.Root.Content[i])
	}
	p.ID, p.Name, p.Description, p.Version = o.String("id"), o.String("name"), o.String("description"), o.String("version")
	p.Icon, p.Author, p.Homepage, p.License = o.String("icon"), o.String("author"), o.String("homepage"), o.String("license")
	p.MaxAgentSteps, p.Core = int(o.Int("maxAgentSteps")), o.Bool("core")
	if why := Reserved(p.ID); p.ID != "" && why != "" {
		l.Errorf(d.NodePos(o.NodeOf("id")), "id %q is %s: choose another id", p.ID, why)
	}
	if u, err := url.Parse(p.Homepage); p.Homepage != "" && (err != nil || u.Scheme != "https" || u.Host == "") {
		l.Errorf(d.NodePos(o.NodeOf("homepage")), "homepage must be an https URL")
	}
	p.Requires = o.Strings("requires")
	seen := map[string]bool{}
	for i, r := range p.Requires {
		pos := d.NodePos(o.NodeOf("requires").Content[i])
		if seen[r] {
			l.Errorf(pos, "requires lists %q twice", r)
		}
		seen[r] = true
		if slices.Contains(OlderRequires, r) {
			l.Warnf(pos, "requires %q is not a capability of the plugin reference (%s); a host that follows the reference lacks it and hides the document",
				r, strings.Join(KnownRequires, ", "))
		} else if !slices.Contains(KnownRequires, r) {
			msg := fmt.Sprintf("requires %q is not a capability this engine knows", r)
			if s := yamlx.Suggest(r, KnownRequires); s != "" {
				l.Errorf(pos, "%s (did you mean %q?)", msg, s)
			} else if !serviceRE.MatchString(r) {
				// An unknown capability is shown to the user by name.
				l.Errorf(pos, "%s; a capability is a name matching [a-z][a-z0-9-]* (at most 40 characters)", msg)
			} else {
				l.Warnf(pos, "%s; a host that lacks it hides the document", msg)
			}
		}
	}
	if x := laterObj(c, o, "access"); x != nil {
		p.Access = parseAccess(c, x)
	}
	if modes := o.Obj("defaultModes"); modes != nil {
		p.DefaultModes = map[Effect]Mode{}
		for _, e := range Effects {
			if m := modes.String(string(e)); m != "" {
				p.DefaultModes[e] = Mode(m)
			}
		}
	}
	p.DataSources = parseDataSources(c, o)
	if x := laterObj(c, o, "contributes"); x != nil {
		p.Contributes = parseContributes(c, x)
	}
	p.Preferences = parsePreferences(c, o, sc, p.Contributes.Screens)
	if x := laterObj(c, o, "i18n"); x != nil {
		p.I18n = parseI18n(c, x, p)
	}
	if x := laterObj(c, o, "legacy"); x != nil {
		p.Legacy = parseLegacy(c, x)
	}
}

func parseAccess(c *yamlx.Ctx, o *yamlx.Obj) Access {
	var a Access
	d, l := c.Doc, c.L
	if v, cn, _ := c.Later(o, "campus"); v != nil {
		seen := map[string]diag.Pos{}
		for i, it := range v.([]any) {
			n := cn.Content[i]
			ca := CampusAccess{Pos: d.NodePos(n)}
			switch x := it.(type) {
			case string:
				ca.Service = x
			case *yamlx.Obj:
				if x.NodeOf("paths") != nil && !x.Has("paths") {
					continue // bad paths must not read as any path
				}
				ca.Service = x.String("service")
				for j, pth := range x.Strings("paths") {
					if err := checkPathPrefix(pth); err != nil {
						l.Errorf(d.NodePos(x.NodeOf("paths").Content[j]), "path prefix %q: %v", pth, err)
						continue
					}
					ca.Paths = append(ca.Paths, pth)
				}
				if x.Has("paths") && len(x.Strings("paths")) == 0 {
					l.Errorf(d.NodePos(x.NodeOf("paths")), "paths is empty: leave it out to allow any path, or list prefixes")
				}
			}
			if ca.Service == "" {
				continue
			}
			if prev, dup := seen[ca.Service]; dup {
				l.Errorf(ca.Pos, "campus service %q is declared twice (also at line %d): merge its paths", ca.Service, prev.Line)
				continue
			}
			seen[ca.Service] = ca.Pos
			a.Campus = append(a.Campus, ca)
		}
	}
	web, wn, _ := c.Later(o, "web")
	seen := map[string]bool{}
	for i, it := range asList(web) {
		s, good := it.(string)
		if !good {
			continue
		}
		pos := d.NodePos(wn.Content[i])
		og, err := ParseOrigin(s)
		if err != nil {
			l.Errorf(pos, "web origin %q: %v", s, err)
			continue
		}
		og.Pos = pos
		if seen[og.String()] {
			l.Errorf(pos, "web origin %s is declared twice", og)
			continue
		}
		seen[og.String()] = true
		a.Web = append(a.Web, og)
	}
	if v, an, _ := c.Later(o, "abilities"); v != nil {
		seen := map[string]bool{}
		for i, it := range v.([]any) {
			s, _ := it.(string)
			if s == "" {
				continue
			}
			if seen[s] {
				l.Errorf(d.NodePos(an.Content[i]), "ability %q is declared twice", s)
				continue
			}
			seen[s] = true
			a.Abilities = append(a.Abilities, s)
		}
	}
	return a
}

// checkPathPrefix accepts a clean absolute path prefix: no dot segments,
// empty segments, escapes, query, fragment or backslash.
func checkPathPrefix(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("must start with /")
	}
	if len(p) > 200 {
		return fmt.Errorf("is longer than 200 bytes")
	}
	for _, r := range p {
		if r <= 0x20 || r >= 0x7f || strings.ContainsRune(`%?#\"<>{}|^`+"`", r) {
			return fmt.Errorf("has %q, which a path prefix may not hold", r)
		}
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("has a dot segment")
		}
	}
	if strings.Contains(p, "//") {
		return fmt.Errorf("has an empty segment (//)")
	}
	return nil
}

// ParseOrigin parses and normalises a web origin: http or https, a host
// (lower case, no trailing dot) and an optional port; no user, path, query
// or fragment. The port is filled in when it is the scheme's default.
func ParseOrigin(s string) (Origin, error) {
	var o Origin
	u, err := url.Parse(s)
	if err != nil {
		return o, fmt.Errorf("not a URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return o, fmt.Errorf("the scheme must be https (or http)")
	}
	if u.User != nil {
		return o, fmt.Errorf("an origin holds no user name or password")
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return o, fmt.Errorf("an origin is scheme://host[:port], with no path, query or fragment")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return o, fmt.Errorf("no host")
	}
	if strings.Contains(host, "*") {
		return o, fmt.Errorf("wildcards are not supported: list each origin")
	}
	if net.ParseIP(host) == nil {
		for _, label := range strings.Split(host, ".") {
			if label == "" || len(label) > 63 {
				return o, fmt.Errorf("host %q has an empty or too long label", host)
			}
			for _, r := range label {
				if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
					return o, fmt.Errorf("host %q must be ASCII letters, digits and '-' (use the punycode form)", host)
				}
			}
		}
	}
	o.Scheme, o.Host = u.Scheme, host
	if ps := u.Port(); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 {
			return o, fmt.Errorf("port %q is out of range", ps)
		}
		o.Port = n
	} else if o.Scheme == "https" {
		o.Port = 443
	} else {
		o.Port = 80
	}
	return o, nil
}

// PluginSchema is the JSON Schema of a front matter, generated from the
// declarations (docs/schema/plugin.schema.json).
func PluginSchema() map[string]any {
	g := yamlx.NewGen()
	root := g.Object(frontMatterDecl)
	return yamlx.SchemaFile("https://pkuinfo.github.io/harness/schema/plugin.schema.json", frontMatterDecl.Title, frontMatterDecl.Doc, root, g)
}
