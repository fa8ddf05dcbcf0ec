package manifest

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

var (
	versionRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	serviceRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)
)

// FrontMatterKeys are the keys a front matter may hold.
var FrontMatterKeys = []string{"id", "name", "description", "version", "icon", "author", "homepage", "license",
	"requires", "access", "dataSources", "preferences", "contributes", "i18n", "legacy", "defaultModes"}

// KnownRequires are the capabilities a host may grant; others are warned about.
var KnownRequires = []string{"campus-session", "network", "background", "notifications", "location", "calendar", "camera", "storage"}

// KnownAbilities are the host abilities a document may declare.
var KnownAbilities = []string{"kv", "notifications", "calendar", "location", "clipboard", "share", "open-url"}

// Text limits for what people and the model read.
const (
	MaxNameLen        = 80
	MaxDescriptionLen = 2000
)

func parseFrontMatter(p *Plugin, d *yamlx.Doc, sc *schemaCompiler, l *diag.List) {
	m, ok := d.Mapping(d.Root, "the front matter", FrontMatterKeys, l)
	if !ok {
		return
	}
	for _, f := range m.Fields {
		p.KeyPos[f.Key] = d.NodePos(f.KeyN)
	}
	str := func(key string, required bool, max int) string {
		f, ok := m.Get(key)
		if !ok {
			if required {
				l.Errorf(d.NodePos(m.Node), "the front matter needs %q", key)
			}
			return ""
		}
		s, ok := d.String(f.Value, key, l)
		if !ok {
			return ""
		}
		if max > 0 && len([]rune(s)) > max {
			l.Errorf(d.NodePos(f.Value), "%s is longer than %d characters", key, max)
		}
		if err := checkText(s, key == "description"); err != nil {
			l.Errorf(d.OffsetPos(f.Value, err.Off), "%s %v", key, err)
		}
		if required && strings.TrimSpace(s) == "" {
			l.Errorf(d.NodePos(f.Value), "%s is empty", key)
		}
		return s
	}
	p.ID = str("id", true, 0)
	if f, ok := m.Get("id"); ok && p.ID != "" {
		if !idRE.MatchString(p.ID) || len(p.ID) > MaxIDLen {
			l.Errorf(d.NodePos(f.Value), "id %q must match [a-z][a-z0-9-]* and be at most %d characters", p.ID, MaxIDLen)
		} else if why := Reserved(p.ID); why != "" {
			l.Errorf(d.NodePos(f.Value), "id %q is %s: choose another id", p.ID, why)
		}
	}
	p.Name = str("name", true, MaxNameLen)
	p.Description = str("description", true, MaxDescriptionLen)
	p.Version = str("version", true, 0)
	if f, ok := m.Get("version"); ok && p.Version != "" && !versionRE.MatchString(p.Version) {
		l.Errorf(d.NodePos(f.Value), "version %q is not a semantic version like 1.0.0", p.Version)
	}
	p.Icon = str("icon", false, 200)
	p.Author = str("author", false, MaxNameLen)
	p.Homepage = str("homepage", false, 300)
	p.License = str("license", false, 80)
	if f, ok := m.Get("homepage"); ok && p.Homepage != "" {
		if u, err := url.Parse(p.Homepage); err != nil || u.Scheme != "https" || u.Host == "" {
			l.Errorf(d.NodePos(f.Value), "homepage must be an https URL")
		}
	}
	if f, ok := m.Get("requires"); ok {
		p.Requires, _ = d.Strings(f.Value, "requires", l)
		seen := map[string]bool{}
		for i, r := range p.Requires {
			pos := d.NodePos(f.Value.Content[i])
			if seen[r] {
				l.Errorf(pos, "requires lists %q twice", r)
			}
			seen[r] = true
			if !contains(KnownRequires, r) {
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
	}
	if f, ok := m.Get("access"); ok {
		p.Access = parseAccess(d, f.Value, l)
	}
	if f, ok := m.Get("defaultModes"); ok {
		p.DefaultModes = parseModes(d, f.Value, l)
	}
	if f, ok := m.Get("dataSources"); ok {
		p.DataSources = parseDataSources(d, f.Value, l)
	}
	if f, ok := m.Get("preferences"); ok {
		p.Preferences = parsePreferences(d, f.Value, sc, l)
	}
	if f, ok := m.Get("contributes"); ok {
		p.Contributes = parseContributes(d, f.Value, l)
	}
	if f, ok := m.Get("i18n"); ok {
		p.I18n = parseI18n(d, f.Value, l)
	}
	if f, ok := m.Get("legacy"); ok {
		p.Legacy = parseLegacy(d, f.Value, l)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func parseAccess(d *yamlx.Doc, n *yaml.Node, l *diag.List) Access {
	var a Access
	m, ok := d.Mapping(n, "access", []string{"campus", "web", "abilities"}, l)
	if !ok {
		return a
	}
	if f, ok := m.Get("campus"); ok {
		if f.Value.Kind != yaml.SequenceNode {
			l.Errorf(d.NodePos(f.Value), "access.campus must be a list of service names or {service, paths}")
		} else {
			seen := map[string]diag.Pos{}
			for _, it := range f.Value.Content {
				c, ok := parseCampus(d, it, l)
				if !ok {
					continue
				}
				if prev, dup := seen[c.Service]; dup {
					l.Errorf(c.Pos, "campus service %q is declared twice (also at line %d): merge its paths", c.Service, prev.Line)
					continue
				}
				seen[c.Service] = c.Pos
				a.Campus = append(a.Campus, c)
			}
		}
	}
	if f, ok := m.Get("web"); ok {
		list, _ := d.Strings(f.Value, "access.web", l)
		seen := map[string]bool{}
		for i, s := range list {
			pos := d.NodePos(f.Value.Content[i])
			o, err := ParseOrigin(s)
			if err != nil {
				l.Errorf(pos, "web origin %q: %v", s, err)
				continue
			}
			o.Pos = pos
			if seen[o.String()] {
				l.Errorf(pos, "web origin %s is declared twice", o)
				continue
			}
			seen[o.String()] = true
			a.Web = append(a.Web, o)
		}
	}
	if f, ok := m.Get("abilities"); ok {
		list, _ := d.Strings(f.Value, "access.abilities", l)
		seen := map[string]bool{}
		for i, s := range list {
			pos := d.NodePos(f.Value.Content[i])
			if !contains(KnownAbilities, s) {
				msg := fmt.Sprintf("unknown ability %q (known: %s)", s, strings.Join(KnownAbilities, ", "))
				if sg := yamlx.Suggest(s, KnownAbilities); sg != "" {
					msg = fmt.Sprintf("unknown ability %q (did you mean %q?)", s, sg)
				}
				l.Errorf(pos, "%s", msg)
				continue
			}
			if seen[s] {
				l.Errorf(pos, "ability %q is declared twice", s)
				continue
			}
			seen[s] = true
			a.Abilities = append(a.Abilities, s)
		}
	}
	return a
}

func parseCampus(d *yamlx.Doc, n *yaml.Node, l *diag.List) (CampusAccess, bool) {
	c := CampusAccess{Pos: d.NodePos(n)}
	if n.Kind == yaml.ScalarNode {
		s, ok := d.String(n, "a campus service", l)
		if !ok {
			return c, false
		}
		c.Service = s
	} else {
		m, ok := d.Mapping(n, "a campus service", []string{"service", "paths"}, l)
		if !ok {
			return c, false
		}
		f, ok := m.Get("service")
		if !ok {
			l.Errorf(c.Pos, "a campus entry needs \"service\"")
			return c, false
		}
		if c.Service, ok = d.String(f.Value, "service", l); !ok {
			return c, false
		}
		if f, ok := m.Get("paths"); ok {
			paths, _ := d.Strings(f.Value, "paths", l)
			if len(paths) == 0 {
				l.Errorf(d.NodePos(f.Value), "paths is empty: leave it out to allow any path, or list prefixes")
			}
			for i, pth := range paths {
				if err := checkPathPrefix(pth); err != nil {
					l.Errorf(d.NodePos(f.Value.Content[i]), "path prefix %q: %v", pth, err)
					continue
				}
				c.Paths = append(c.Paths, pth)
			}
		}
	}
	if !serviceRE.MatchString(c.Service) {
		l.Errorf(c.Pos, "service name %q must match [a-z][a-z0-9-]* (at most 40 characters)", c.Service)
		return c, false
	}
	return c, true
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

func parseModes(d *yamlx.Doc, n *yaml.Node, l *diag.List) map[Effect]Mode {
	keys := []string{"read", "write", "money", "public"}
	m, ok := d.Mapping(n, "defaultModes", keys, l)
	if !ok {
		return nil
	}
	out := map[Effect]Mode{}
	for _, f := range m.Fields {
		s, ok := d.String(f.Value, "defaultModes."+f.Key, l)
		if !ok {
			continue
		}
		switch Mode(s) {
		case Auto, Ask, Off:
			out[Effect(f.Key)] = Mode(s)
		default:
			l.Errorf(d.NodePos(f.Value), "mode %q must be auto, ask or off", s)
		}
	}
	return out
}
