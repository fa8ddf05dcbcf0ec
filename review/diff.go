package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"go.yaml.in/yaml/v3"
)

// Change kinds.
const (
	Added     = "added"
	Removed   = "removed"
	Broadened = "broadened"
	Narrowed  = "narrowed"
	Changed   = "changed"
)

// Sections a change belongs to, in the order Diff lists them.
const (
	SecID           = "id"
	SecVersion      = "version"
	SecText         = "text" // name, description, i18n
	SecRequires     = "requires"
	SecCampus       = "campus"
	SecWeb          = "web"
	SecAbilities    = "abilities"
	SecModes        = "defaultModes"
	SecLegacy       = "legacy"
	SecTools        = "tools"
	SecInstructions = "instructions"
	SecOther        = "other" // data sources, preferences, contributes, widgets
)

var sectionOrder = []string{SecID, SecVersion, SecText, SecRequires, SecCampus, SecWeb, SecAbilities,
	SecModes, SecLegacy, SecTools, SecInstructions, SecOther}

// Change is one difference between two versions of a document.
type Change struct {
	// Kind is added, removed, broadened, narrowed or changed.
	Kind string `json:"kind"`
	// Path names what changed, e.g. "access.campus.card.paths",
	// "access.web", "tools.pay.effect", "instructions".
	Path string `json:"path"`
	// Old and New are the values before and after, as text ("" when absent).
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// Wider is true when the change lets the document reach or do more.
	Wider bool `json:"wider"`
	// Message says the change in a sentence.
	Message string `json:"message"`
	// Diff is the unified diff of the old and new text of a changed text
	// part (the instructions, a tool's description, steps, input or output
	// schema): hunks whose lines start with "@@", " ", "-" or "+".
	Diff []string `json:"diff,omitempty"`
	// Section is the part of the document (requires, campus, web, abilities,
	// tools, ...) and Item the entry in it (a service, an origin, an ability,
	// a capability or a tool name), so a sheet can mark its line.
	Section string `json:"section"`
	Item    string `json:"item,omitempty"`
}

// Delta is the difference between two versions of a document (what Diff returns).
type Delta struct {
	// Wider is true when any change widens the declared access or effects.
	Wider bool `json:"wider"`
	// Changes lists every change, access first, wider and narrower alike.
	Changes []Change `json:"changes"`
}

// WiderChanges returns the changes that widen.
func (d Delta) WiderChanges() []Change {
	var out []Change
	for _, c := range d.Changes {
		if c.Wider {
			out = append(out, c)
		}
	}
	return out
}

// Empty reports whether the two versions declare the same thing.
func (d Delta) Empty() bool { return len(d.Changes) == 0 }

type differ struct {
	out       []Change
	oldFx, fx map[string]interpreter.ToolEffect // effective effects of old and new
}

func (d *differ) add(c Change) { d.out = append(d.out, c) }

// Diff compares the old and new versions of a document. Access is compared
// after normalisation, so spelling differences (case, default ports,
// trailing dots, "./" in paths, duplicates, order) are no change. A nil
// plugin declares nothing.
func Diff(old, new *manifest.Plugin) Delta {
	if old == nil {
		old = &manifest.Plugin{}
	}
	if new == nil {
		new = &manifest.Plugin{}
	}
	d := differ{oldFx: toolEffects(old), fx: toolEffects(new)}
	if old.ID != new.ID {
		d.add(Change{Kind: Changed, Path: "id", Old: old.ID, New: new.ID, Wider: true, Section: SecID,
			Message: fmt.Sprintf("the id changes from %q to %q", old.ID, new.ID)})
	}
	if old.Version != new.Version {
		d.add(Change{Kind: Changed, Path: "version", Old: old.Version, New: new.Version, Section: SecVersion,
			Message: fmt.Sprintf("version %s → %s", orNone(old.Version), orNone(new.Version))})
	}
	d.text(old, new)
	oa, na := normalizeAccess(old), normalizeAccess(new)
	d.requires(oa, na)
	d.campus(oa, na)
	d.web(oa, na)
	d.abilities(oa, na)
	d.modes(old, new)
	d.legacy(old, new)
	d.tools(old, new)
	if old.Instructions != new.Instructions {
		add, del := lineDelta(old.Instructions, new.Instructions)
		d.add(Change{Kind: Changed, Path: "instructions", Section: SecInstructions,
			Message: fmt.Sprintf("the instructions for the assistant changed (+%d −%d lines)", add, del),
			Diff:    unifiedDiff(old.Instructions, new.Instructions)})
	}
	d.other(old, new)

	rank := map[string]int{}
	for i, s := range sectionOrder {
		rank[s] = i
	}
	sort.SliceStable(d.out, func(i, j int) bool { return rank[d.out[i].Section] < rank[d.out[j].Section] })
	res := Delta{Changes: d.out}
	if res.Changes == nil {
		res.Changes = []Change{}
	}
	for _, c := range res.Changes {
		if c.Wider {
			res.Wider = true
		}
	}
	return res
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func (d *differ) text(old, new *manifest.Plugin) {
	field := func(path, o, n, what string) {
		if o != n {
			d.add(Change{Kind: Changed, Path: path, Old: o, New: n, Section: SecText, Message: what + " changed"})
		}
	}
	field("name", old.Name, new.Name, "the name")
	field("description", old.Description, new.Description, "the description")
	field("icon", old.Icon, new.Icon, "the icon")
	field("author", old.Author, new.Author, "the author")
	field("homepage", old.Homepage, new.Homepage, "the homepage")
	field("license", old.License, new.License, "the license")
	if !sameJSON(old.I18n, new.I18n) {
		d.add(Change{Kind: Changed, Path: "i18n", Section: SecText, Message: "the translations changed"})
	}
}

func (d *differ) requires(oa, na access) {
	for _, c := range sortedKeys(na.requires) {
		if !oa.requires[c] {
			d.add(Change{Kind: Added, Path: "requires", New: c, Wider: true, Section: SecRequires, Item: c,
				Message: fmt.Sprintf("now requires %s: %s", c, CapabilityWords(c).En)})
		}
	}
	for _, c := range sortedKeys(oa.requires) {
		if !na.requires[c] {
			d.add(Change{Kind: Removed, Path: "requires", Old: c, Section: SecRequires, Item: c,
				Message: fmt.Sprintf("no longer requires %s", c)})
		}
	}
}

func (d *differ) campus(oa, na access) {
	for _, s := range sortedKeys(na.campus) {
		np := na.campus[s]
		op, had := oa.campus[s]
		path := "access.campus." + s
		if !had {
			d.add(Change{Kind: Added, Path: path, New: pathsText(np), Wider: true, Section: SecCampus, Item: s,
				Message: fmt.Sprintf("new campus service %s (%s): %s", s, ServiceWords(s).En, pathsText(np))})
			continue
		}
		if equalStrings(op, np) {
			continue
		}
		var wider, narrower []string
		for _, q := range np {
			if !coveredBy(op, q) {
				wider = append(wider, q)
			}
		}
		for _, q := range op {
			if !coveredBy(np, q) {
				narrower = append(narrower, q)
			}
		}
		switch {
		case len(wider) > 0 && equalStrings(np, []string{"/"}):
			d.add(Change{Kind: Broadened, Path: path + ".paths", Old: pathsText(op), New: pathsText(np), Wider: true,
				Section: SecCampus, Item: s,
				Message: fmt.Sprintf("campus service %s: the path limit is removed, any path is allowed (was %s)", s, pathsText(op))})
		case len(wider) > 0:
			var parts []string
			for _, q := range wider {
				var from []string
				for _, p := range op {
					if prefixCovers(q, p) {
						from = append(from, p)
					}
				}
				if len(from) > 0 {
					parts = append(parts, fmt.Sprintf("%s broadened to %s", strings.Join(from, ", "), q))
				} else {
					parts = append(parts, "new path prefix "+q)
				}
			}
			d.add(Change{Kind: Broadened, Path: path + ".paths", Old: pathsText(op), New: pathsText(np), Wider: true,
				Section: SecCampus, Item: s,
				Message: fmt.Sprintf("campus service %s: %s", s, strings.Join(parts, "; "))})
		case len(narrower) > 0:
			d.add(Change{Kind: Narrowed, Path: path + ".paths", Old: pathsText(op), New: pathsText(np),
				Section: SecCampus, Item: s,
				Message: fmt.Sprintf("campus service %s: narrowed to %s", s, pathsText(np))})
		}
	}
	for _, s := range sortedKeys(oa.campus) {
		if _, ok := na.campus[s]; !ok {
			d.add(Change{Kind: Removed, Path: "access.campus." + s, Old: pathsText(oa.campus[s]), Section: SecCampus, Item: s,
				Message: fmt.Sprintf("campus service %s is no longer used", s)})
		}
	}
}

// pathsText shows a prefix set: "any path" for "/".
func pathsText(p []string) string {
	if len(p) == 1 && p[0] == "/" {
		return "any path"
	}
	return strings.Join(p, ", ")
}

func (d *differ) web(oa, na access) {
	for _, o := range na.web {
		if originCoveredBy(oa.web, o) {
			continue
		}
		msg := fmt.Sprintf("new web origin %s", o)
		kind := Added
		for _, p := range oa.web {
			if p.host == o.host || strings.HasSuffix(o.host, "."+strings.TrimPrefix(p.host, "*.")) {
				kind = Broadened
				switch {
				case p.host == o.host && p.scheme != o.scheme:
					msg = fmt.Sprintf("web origin %s now also over %s: %s", p.host, o.scheme, o)
				case p.host == o.host:
					msg = fmt.Sprintf("web origin %s on another port: %s", p.host, o)
				default:
					msg = fmt.Sprintf("web origin %s: a subdomain is added: %s", p, o)
				}
				break
			}
		}
		if strings.HasPrefix(o.host, "*.") {
			msg += " (every subdomain)"
		}
		d.add(Change{Kind: kind, Path: "access.web", New: o.String(), Wider: true, Section: SecWeb, Item: o.String(), Message: msg})
	}
	for _, o := range oa.web {
		if !originCoveredBy(na.web, o) {
			d.add(Change{Kind: Removed, Path: "access.web", Old: o.String(), Section: SecWeb, Item: o.String(),
				Message: fmt.Sprintf("web origin %s is no longer used", o)})
		}
	}
}

func (d *differ) abilities(oa, na access) {
	for _, a := range sortedKeys(na.abilities) {
		if !oa.abilities[a] {
			d.add(Change{Kind: Added, Path: "access.abilities", New: a, Wider: true, Section: SecAbilities, Item: a,
				Message: fmt.Sprintf("new ability %s: %s", a, AbilityWords(a).En)})
		}
	}
	for _, a := range sortedKeys(oa.abilities) {
		if !na.abilities[a] {
			d.add(Change{Kind: Removed, Path: "access.abilities", Old: a, Section: SecAbilities, Item: a,
				Message: fmt.Sprintf("ability %s is no longer used", a)})
		}
	}
}

func (d *differ) modes(old, new *manifest.Plugin) {
	for _, e := range manifest.Effects {
		om, nm := old.DefaultModes[e], new.DefaultModes[e]
		if om == nm {
			continue
		}
		or, nr := modeRank(om, e), modeRank(nm, e)
		c := Change{Kind: Changed, Path: "defaultModes." + string(e), Old: string(om), New: string(nm), Section: SecModes, Item: string(e)}
		switch {
		case nr > or:
			c.Kind, c.Wider = Broadened, true
			c.Message = fmt.Sprintf("%s tools: the default mode becomes %s (was %s): fewer questions", e, orDefault(nm), orDefault(om))
		case nr < or:
			c.Kind = Narrowed
			c.Message = fmt.Sprintf("%s tools: the default mode becomes %s (was %s)", e, orDefault(nm), orDefault(om))
		default:
			c.Message = fmt.Sprintf("%s tools: the default mode is spelled %s (was %s)", e, orDefault(nm), orDefault(om))
		}
		d.add(c)
	}
}

func orDefault(m manifest.Mode) string {
	if m == "" {
		return "the default"
	}
	return string(m)
}

func (d *differ) legacy(old, new *manifest.Plugin) {
	oids := map[string]bool{}
	for _, id := range old.Legacy.IDs {
		oids[normName(id)] = true
	}
	for _, id := range new.Legacy.IDs {
		if n := normName(id); !oids[n] {
			oids[n] = true // once
			d.add(Change{Kind: Added, Path: "legacy.ids", New: n, Wider: true, Section: SecLegacy, Item: n,
				Message: fmt.Sprintf("takes over the settings and data of plugin id %q", n)})
		}
	}
	if !sameJSON(old.Legacy.Tools, new.Legacy.Tools) || !sameJSON(old.Legacy.Widgets, new.Legacy.Widgets) {
		d.add(Change{Kind: Changed, Path: "legacy", Section: SecLegacy, Message: "the legacy name mappings changed"})
	}
}

// effectRank is Effect.Rank with an unknown effect counted strongest.
func effectRank(e manifest.Effect) int {
	if r := e.Rank(); r >= 0 {
		return r
	}
	return len(manifest.Effects)
}

func toolMap(p *manifest.Plugin) (map[string]*manifest.Tool, []string) {
	m := map[string]*manifest.Tool{}
	for _, t := range p.Tools {
		if t == nil {
			continue
		}
		// Names are compared as the engine runs them: exactly. (Folding
		// their case once merged "sendA" and "senda" into one line and hid
		// the other tool.)
		n := t.Name
		if prev, ok := m[n]; ok && effectRank(prev.Effect) >= effectRank(t.Effect) {
			continue // a duplicate: keep the stronger
		}
		m[n] = t
	}
	return m, sortedKeys(m)
}

func (d *differ) tools(old, new *manifest.Plugin) {
	om, _ := toolMap(old)
	nm, names := toolMap(new)
	for _, n := range names {
		t := nm[n]
		o, had := om[n]
		path := "tools." + n
		if !had {
			e := effective(d.fx, t)
			c := Change{Kind: Added, Path: path, New: string(e), Section: SecTools, Item: n}
			if effectRank(e) > 0 {
				c.Wider = true
				c.Message = fmt.Sprintf("new tool %s that %s", n, EffectWords(e).En)
				if e != t.Effect {
					c.Message += " (" + d.fx[n].Why() + ")"
				}
			} else {
				c.Message = fmt.Sprintf("new read tool %s", n)
			}
			d.add(c)
			continue
		}
		d.tool(path, n, o, t)
	}
	_, onames := toolMap(old)
	for _, n := range onames {
		if _, ok := nm[n]; !ok {
			d.add(Change{Kind: Removed, Path: "tools." + n, Old: string(om[n].Effect), Section: SecTools, Item: n,
				Message: fmt.Sprintf("tool %s is removed", n)})
		}
	}
}

func (d *differ) tool(path, n string, o, t *manifest.Tool) {
	// Effective effects: a read tool that now POSTs is a write.
	oe, ne := effective(d.oldFx, o), effective(d.fx, t)
	if or, nr := effectRank(oe), effectRank(ne); or != nr {
		c := Change{Kind: Narrowed, Path: path + ".effect", Old: string(oe), New: string(ne), Section: SecTools, Item: n,
			Message: fmt.Sprintf("tool %s: effect %s → %s", n, oe, ne)}
		if nr > or {
			c.Kind, c.Wider = Broadened, true
			c.Message += ": it now " + EffectWords(ne).En
			if ne != t.Effect {
				c.Message += " (" + d.fx[n].Why() + ")"
			}
		}
		d.add(c)
	}
	// A safeguard dropped widens; one added narrows. serial is neither.
	guard := func(name string, was, is bool, dropped, set string) {
		switch {
		case was && !is:
			d.add(Change{Kind: Broadened, Path: path + "." + name, Old: "true", New: "false", Wider: true,
				Section: SecTools, Item: n, Message: fmt.Sprintf("tool %s: %s", n, dropped)})
		case !was && is:
			d.add(Change{Kind: Narrowed, Path: path + "." + name, Old: "false", New: "true",
				Section: SecTools, Item: n, Message: fmt.Sprintf("tool %s: %s", n, set)})
		}
	}
	guard("untrusted", o.Untrusted, t.Untrusted,
		"untrusted is dropped: its results would no longer be treated as untrusted", "its results are now marked untrusted")
	guard("userOnly", o.UserOnly, t.UserOnly,
		"userOnly is dropped: the assistant may now call it", "now only you can call it")
	guard("alwaysAsk", o.AlwaysAsk, t.AlwaysAsk,
		"alwaysAsk is dropped: it may run without asking", "now always asks before it runs")
	if o.Serial != t.Serial {
		d.add(Change{Kind: Changed, Path: path + ".serial", Old: fmt.Sprint(o.Serial), New: fmt.Sprint(t.Serial),
			Section: SecTools, Item: n, Message: fmt.Sprintf("tool %s: serial is now %v", n, t.Serial)})
	}
	neutral := func(field, what string, same bool, diff func() []string) {
		if !same {
			c := Change{Kind: Changed, Path: path + "." + field, Section: SecTools, Item: n,
				Message: fmt.Sprintf("tool %s: %s changed", n, what)}
			if diff != nil {
				c.Diff = diff()
			}
			d.add(c)
		}
	}
	neutral("title", "the title", o.Title == t.Title, nil)
	neutral("description", "the description", o.Description == t.Description,
		func() []string { return unifiedDiff(o.Description, t.Description) })
	neutral("input", "the input schema", sameJSON(o.Input, t.Input),
		func() []string { return unifiedDiff(jsonText(o.Input), jsonText(t.Input)) })
	neutral("output", "the output schema", sameJSON(o.Output, t.Output),
		func() []string { return unifiedDiff(jsonText(o.Output), jsonText(t.Output)) })
	neutral("steps", "the steps", sameYAML(o.Steps, t.Steps),
		func() []string { return unifiedDiff(yamlText(o.Steps), yamlText(t.Steps)) })
	neutral("limits", "the limits", sameYAML(o.Limits, t.Limits), nil)
}

func (d *differ) other(old, new *manifest.Plugin) {
	neutral := func(path, what string, same bool) {
		if !same {
			d.add(Change{Kind: Changed, Path: path, Section: SecOther, Message: what + " changed"})
		}
	}
	neutral("dataSources", "the data sources", sameJSON(old.DataSources, new.DataSources))
	neutral("maxAgentSteps", "the agent's step budget", old.MaxAgentSteps == new.MaxAgentSteps)
	neutral("core", "whether it can be turned off (core)", old.Core == new.Core)
	neutral("preferences", "the preferences", sameJSON(old.Preferences, new.Preferences))
	neutral("contributes", "the widgets, screens, settings and commands it adds", sameJSON(old.Contributes, new.Contributes))
	same := len(old.Widgets) == len(new.Widgets)
	for k, v := range old.Widgets {
		if w, ok := new.Widgets[k]; !ok || !bytes.Equal(v, w) {
			same = false
		}
	}
	neutral("widgets", "the widget templates", same)
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func sameYAML(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, err1 := yaml.Marshal(a)
	y, err2 := yaml.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// lineDelta counts lines added and removed between two texts (as a
// multiset of lines: moved lines count as neither).
func lineDelta(a, b string) (added, removed int) {
	count := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(b, "\n") {
		if count[l] > 0 {
			count[l]--
		} else {
			added++
		}
	}
	for _, n := range count {
		removed += n
	}
	return added, removed
}
