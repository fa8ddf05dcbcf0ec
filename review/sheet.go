package review

import (
	"sort"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
)

// Info is what the engine knows about a document beyond its text.
type Info struct {
	Hash   string // content hash (dirhash "h1:…")
	Trust  string // "official" or "community"
	Link   string // where it comes from ("" for a local path not installed)
	Commit string // the resolved git commit, for a GitHub link
}

// Sheet is a review sheet: what a document declares, in words a student
// understands. Its JSON field names are stable (docs/review.md).
type Sheet struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	NameEn        string `json:"nameEn,omitempty"`
	Description   string `json:"description"`
	DescriptionEn string `json:"descriptionEn,omitempty"`
	Version       string `json:"version"`
	Hash          string `json:"hash"`
	Trust         string `json:"trust"`
	TrustAbout    Words  `json:"trustAbout"`
	Link          string `json:"link,omitempty"`
	Commit        string `json:"commit,omitempty"`
	// Icon and MaxAgentSteps are shown as declared; MaxAgentSteps is a
	// hint to the agent loop and grants nothing.
	Icon          string `json:"icon,omitempty"`
	MaxAgentSteps int    `json:"maxAgentSteps,omitempty"`

	Requires  []CapabilityLine `json:"requires"`
	Campus    []ServiceLine    `json:"campus"`
	Web       []OriginLine     `json:"web"`
	Abilities []AbilityLine    `json:"abilities"`
	Tools     []ToolLine       `json:"tools"`

	// Update is set when the sheet shows an update of an installed version.
	Update *UpdateInfo `json:"update,omitempty"`
}

// CapabilityLine is one capability from requires.
type CapabilityLine struct {
	Name  string `json:"name"`
	About Words  `json:"about"`
	Wider bool   `json:"wider"`
}

// ServiceLine is one campus service the document may reach.
type ServiceLine struct {
	Service string `json:"service"`
	About   Words  `json:"about"`
	Known   bool   `json:"known"` // in the engine's built-in catalogue
	// AnyPath is true when every path of the service is allowed; else Paths
	// lists the allowed path prefixes.
	AnyPath bool     `json:"anyPath"`
	Paths   []string `json:"paths"`
	Wider   bool     `json:"wider"`
}

// OriginLine is one public web origin.
type OriginLine struct {
	Origin string `json:"origin"` // scheme://host[:port], default port left out
	Scheme string `json:"scheme"`
	Host   string `json:"host"`
	Port   int    `json:"port"`
	Wider  bool   `json:"wider"`
}

// AbilityLine is one host ability.
type AbilityLine struct {
	Name  string `json:"name"`
	About Words  `json:"about"`
	Wider bool   `json:"wider"`
}

// ToolLine is one tool with its effect and flags.
type ToolLine struct {
	Name    string `json:"name"`
	Title   string `json:"title"`
	TitleEn string `json:"titleEn,omitempty"`
	// Effect is the effective effect: the declared one, raised to write
	// when a step can send an unsafe method outside the catalogue's query
	// endpoints (then Declared and EffectWhy say so).
	Effect      manifest.Effect `json:"effect"`
	EffectAbout Words           `json:"effectAbout"`
	Declared    manifest.Effect `json:"declared,omitempty"`
	EffectWhy   string          `json:"effectWhy,omitempty"`
	Untrusted   bool            `json:"untrusted"`
	UserOnly    bool            `json:"userOnly"`
	AlwaysAsk   bool            `json:"alwaysAsk"`
	Serial      bool            `json:"serial"`
	Wider       bool            `json:"wider"`
}

// UpdateInfo tells how an update differs from the installed version.
type UpdateInfo struct {
	FromVersion string   `json:"fromVersion"`
	FromHash    string   `json:"fromHash"`
	Wider       bool     `json:"wider"`
	Changes     []Change `json:"changes"`
}

// builtinServices is the proxy's built-in campus catalogue.
var builtinServices = proxy.Builtin()

// toolEffects is each tool's effect as the engine sees it, with the built-in
// catalogue's query endpoints.
func toolEffects(p *manifest.Plugin) map[string]interpreter.ToolEffect {
	if p == nil || len(p.Tools) == 0 {
		return nil
	}
	return interpreter.Effects(p, builtinServices)
}

// effective is t's effective effect: its declared one, or the stronger one
// its steps show.
func effective(fx map[string]interpreter.ToolEffect, t *manifest.Tool) manifest.Effect {
	if e, ok := fx[t.Name]; ok && effectRank(e.Effective) > effectRank(t.Effect) {
		return e.Effective
	}
	return t.Effect
}

// NewSheet builds the review sheet of p from what it declares, and each
// tool's effective effect (what its steps can send).
func NewSheet(p *manifest.Plugin, info Info) *Sheet {
	s := &Sheet{
		ID: p.ID, Name: p.Name, Description: p.Description, Version: p.Version,
		Hash: info.Hash, Trust: info.Trust, TrustAbout: TrustWords(info.Trust), Link: info.Link, Commit: info.Commit,
		Icon: p.Icon, MaxAgentSteps: p.MaxAgentSteps,
		Requires: []CapabilityLine{}, Campus: []ServiceLine{}, Web: []OriginLine{}, Abilities: []AbilityLine{}, Tools: []ToolLine{},
	}
	en := p.I18n["en"]
	if en.Name != p.Name {
		s.NameEn = en.Name
	}
	if en.Description != p.Description {
		s.DescriptionEn = en.Description
	}
	a := normalizeAccess(p)
	for _, c := range sortedKeys(a.requires) {
		s.Requires = append(s.Requires, CapabilityLine{Name: c, About: CapabilityWords(c)})
	}
	for _, name := range sortedKeys(a.campus) {
		_, known := builtinServices[name]
		l := ServiceLine{Service: name, About: ServiceWords(name), Known: known, Paths: []string{}}
		if ps := a.campus[name]; len(ps) == 1 && ps[0] == "/" {
			l.AnyPath = true
		} else {
			l.Paths = ps
		}
		s.Campus = append(s.Campus, l)
	}
	for _, o := range a.web {
		s.Web = append(s.Web, OriginLine{Origin: o.String(), Scheme: o.scheme, Host: o.host, Port: o.port})
	}
	for _, ab := range sortedKeys(a.abilities) {
		s.Abilities = append(s.Abilities, AbilityLine{Name: ab, About: AbilityWords(ab)})
	}
	tm, names := toolMap(p)
	fx := toolEffects(p)
	for _, n := range names {
		t := tm[n]
		e := effective(fx, t)
		l := ToolLine{Name: t.Name, Title: t.Title, Effect: e, EffectAbout: EffectWords(e),
			Untrusted: t.Untrusted, UserOnly: t.UserOnly, AlwaysAsk: t.AlwaysAsk, Serial: t.Serial}
		if e != t.Effect {
			l.Declared, l.EffectWhy = t.Effect, fx[n].Why()
		}
		if ti, ok := en.Tools[t.Name]; ok && ti.Title != t.Title {
			l.TitleEn = ti.Title
		}
		s.Tools = append(s.Tools, l)
	}
	sort.SliceStable(s.Tools, func(i, j int) bool { return s.Tools[i].Name < s.Tools[j].Name })
	return s
}

// Mark records an update's diff against the installed version (its version
// and hash) and marks the lines that widen.
func (s *Sheet) Mark(d Delta, fromVersion, fromHash string) {
	s.Update = &UpdateInfo{FromVersion: fromVersion, FromHash: fromHash, Wider: d.Wider, Changes: d.Changes}
	for _, c := range d.Changes {
		if !c.Wider {
			continue
		}
		switch c.Section {
		case SecRequires:
			for i := range s.Requires {
				if s.Requires[i].Name == c.Item {
					s.Requires[i].Wider = true
				}
			}
		case SecCampus:
			for i := range s.Campus {
				if s.Campus[i].Service == c.Item {
					s.Campus[i].Wider = true
				}
			}
		case SecWeb:
			for i := range s.Web {
				if s.Web[i].Origin == c.Item {
					s.Web[i].Wider = true
				}
			}
		case SecAbilities:
			for i := range s.Abilities {
				if s.Abilities[i].Name == c.Item {
					s.Abilities[i].Wider = true
				}
			}
		case SecTools:
			for i := range s.Tools {
				if s.Tools[i].Name == c.Item {
					s.Tools[i].Wider = true
				}
			}
		}
	}
}

// Wider reports whether any line is marked as widening.
func (s *Sheet) Wider() bool { return s.Update != nil && s.Update.Wider }
