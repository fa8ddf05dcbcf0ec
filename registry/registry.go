package registry

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
)

// Registry holds documents and native tools. It is safe for concurrent use.
type Registry struct {
	mu          sync.RWMutex
	docs        map[string]*Document
	tools       map[string]*Tool  // by id
	models      map[string]*Tool  // by model name
	oldPlugins  map[string]string // legacy plugin id -> id
	problems    []error
	caps        map[string]bool // nil: every capability
	store       Store
	compile     Compiler
	settings    map[string]PluginSettings
	settingsErr error
	loaded      bool
	cache       *Cache
	remoteConn  RemoteConn
	services    proxy.Catalogue // marks the query endpoints for effective effects
}

// Option configures a Registry.
type Option func(*Registry)

// WithCapabilities says which capabilities the host has; a document that
// requires another is unavailable. Without this option every capability is
// present.
func WithCapabilities(caps ...string) Option {
	return func(r *Registry) {
		r.caps = map[string]bool{}
		for _, c := range caps {
			r.caps[c] = true
		}
	}
}

// WithStore keeps modes, enabled flags and preference values in s (by
// default they live in memory).
func WithStore(s Store) Option { return func(r *Registry) { r.store = s } }

// WithCompiler makes documents runnable: c builds a document's Runner.
func WithCompiler(c Compiler) Option { return func(r *Registry) { r.compile = c } }

// WithServices sets the catalogue whose query endpoints (proxy.Service
// QueryPaths) the effective effects are computed with (proxy.Builtin()
// otherwise).
func WithServices(c proxy.Catalogue) Option { return func(r *Registry) { r.services = c } }

// WithClock sets the clock of the data-source cache.
func WithClock(now func() time.Time) Option { return func(r *Registry) { r.cache.now = now } }

// New makes an empty registry.
func New(opts ...Option) *Registry {
	r := &Registry{
		docs:       map[string]*Document{},
		tools:      map[string]*Tool{},
		models:     map[string]*Tool{},
		oldPlugins: map[string]string{},
		store:      NewMemoryStore(),
		cache:      NewCache(nil),
	}
	for _, o := range opts {
		o(r)
	}
	if r.services == nil {
		r.services = proxy.Builtin()
	}
	return r
}

// DocOptions say how a document is held.
type DocOptions struct {
	Origin Origin // Installed by default
	Core   bool   // a core document cannot be disabled
}

// ErrConflict is wrapped by the error when two documents claim one id.
var ErrConflict = errors.New("id conflict")

// AddFiles parses a document's files and adds it; a document with errors is
// refused with its diagnostics.
func (r *Registry) AddFiles(files manifest.Files, trust Trust, o DocOptions) (*Document, error) {
	return r.addPrepared(r.prepare(files), trust, o)
}

// addPrepared is AddFiles of a prepared document.
func (r *Registry) addPrepared(d prepared, trust Trust, o DocOptions) (*Document, error) {
	p, l := d.p, d.l
	if l.HasErrors() {
		id := p.ID
		if id == "" {
			id = "a document"
		}
		err := fmt.Errorf("%s is invalid: %v", id, l.Err())
		r.note(docProblem(p, err))
		return nil, err
	}
	return r.addDocument(p, trust, o, d.effects)
}

// AddDocument adds a parsed document. Its id, its legacy ids and its tool
// ids must not be claimed by another document.
func (r *Registry) AddDocument(p *manifest.Plugin, trust Trust, o DocOptions) (*Document, error) {
	return r.addDocument(p, trust, o, nil)
}

// addDocument is AddDocument with the tools' effects read already (nil:
// read them here).
func (r *Registry) addDocument(p *manifest.Plugin, trust Trust, o DocOptions, effects map[string]interpreter.ToolEffect) (*Document, error) {
	if _, err := ParseTrust(string(trust)); err != nil {
		return nil, err
	}
	if o.Origin == "" {
		o.Origin = Installed
	}
	for _, id := range append([]string{p.ID}, p.Legacy.IDs...) {
		if why := manifest.Reserved(id); why != "" {
			err := fmt.Errorf("%s refused: %q is %s", p.ID, id, why)
			r.note(docProblem(p, err))
			return nil, err
		}
	}
	d := &Document{
		ID: p.ID, Name: p.Name, Description: p.Description, Trust: trust, Origin: o.Origin,
		Core: o.Core, Plugin: p, instructions: strings.TrimSpace(p.Instructions),
	}
	if effects == nil {
		effects = interpreter.Effects(p, r.services)
	}
	for _, mt := range p.Tools {
		eff := effects[mt.Name]
		if eff.Effective == "" {
			eff.Effective = mt.Effect
		}
		t := &Tool{
			ID: p.ID + "." + mt.Name, ModelName: manifest.ModelName(p.ID, mt.Name), Plugin: p.ID, Name: mt.Name,
			Title: mt.Title, Description: mt.Description, Effect: eff.Effective, Declared: mt.Effect, EffectWhy: eff.Why(), Input: mt.Input,
			Flags:  Flags{Untrusted: mt.Untrusted, UserOnly: mt.UserOnly, AlwaysAsk: mt.AlwaysAsk, Serial: mt.Serial},
			schema: mt.InputSchema, doc: d, sem: make(chan struct{}, 1),
		}
		if t.schema == nil {
			err := fmt.Errorf("%s: tool %s has no compiled input schema", p.ID, mt.Name)
			r.note(docProblem(p, err))
			return nil, err
		}
		d.Tools = append(d.Tools, t)
	}
	return d, r.add(d, p.Legacy.IDs)
}

var nameRE = regexp.MustCompile(`^[a-z][A-Za-z0-9_-]*$`)
var idRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// AddNative adds tools the host implements under one plugin id. Native
// tools are official and core.
func (r *Registry) AddNative(np NativePlugin, tools ...NativeTool) (*Document, error) {
	if !idRE.MatchString(np.ID) || len(np.ID) > manifest.MaxIDLen {
		return nil, fmt.Errorf("native plugin id %q must match [a-z][a-z0-9-]*", np.ID)
	}
	d := &Document{ID: np.ID, Name: np.Name, Description: np.Description, Trust: Official, Origin: Native,
		Core: true, instructions: strings.TrimSpace(np.Instructions)}
	seen := map[string]bool{}
	for _, nt := range tools {
		name := nt.Name()
		if !nameRE.MatchString(name) || len(manifest.ModelName(np.ID, name)) > manifest.MaxModelNameLen {
			return nil, fmt.Errorf("native tool name %q must match [a-z][A-Za-z0-9_-]* and fit %d characters with its plugin id", name, manifest.MaxModelNameLen)
		}
		if seen[name] {
			return nil, fmt.Errorf("native tool %s.%s is added twice", np.ID, name)
		}
		seen[name] = true
		if nt.Effect().Rank() < 0 {
			return nil, fmt.Errorf("native tool %s.%s has effect %q: it must be read, write, money or public", np.ID, name, nt.Effect())
		}
		in := nt.InputSchema()
		if typ, _ := in["type"].(string); typ != "object" {
			return nil, fmt.Errorf("native tool %s.%s: the input schema needs type: object", np.ID, name)
		}
		s, err := manifest.CompileSchema(in)
		if err != nil {
			return nil, fmt.Errorf("native tool %s.%s: input schema: %v", np.ID, name, err)
		}
		t := &Tool{ID: np.ID + "." + name, ModelName: manifest.ModelName(np.ID, name), Plugin: np.ID, Name: name,
			Title: name, Description: nt.Description(), Effect: nt.Effect(), Declared: nt.Effect(), Input: in, schema: s, doc: d, native: nt,
			sem: make(chan struct{}, 1)}
		if f, ok := nt.(NativeFlags); ok {
			t.Flags = f.Flags()
		}
		d.Tools = append(d.Tools, t)
	}
	sort.Slice(d.Tools, func(i, j int) bool { return d.Tools[i].Name < d.Tools[j].Name })
	return d, r.add(d, nil)
}

func (r *Registry) note(err error) {
	r.mu.Lock()
	r.problems = append(r.problems, err)
	r.mu.Unlock()
}

func (r *Registry) add(d *Document, legacy []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d.Origin == Native {
		// The host's own tools win over a document that took their id
		// first (one the reserved list does not know).
		r.dropFor(d.ID)
	}
	// An id is one document's. A legacy id never hides a plugin that
	// actually has it (the reference: "If a plugin with an old id is
	// actually installed, the host uses that plugin; the legacy mapping
	// never hides it"): a document may list the id of another as a legacy
	// id, and a document may take an id another lists as legacy; lookups of
	// the id reach the document that has it (document). Two documents may
	// not list the same legacy id: which one it means would be a guess.
	err := error(nil)
	if prev, ok := r.docs[d.ID]; ok {
		err = fmt.Errorf("%w: %q is already the id of the %s document %q", ErrConflict, d.ID, prev.Origin, prev.Name)
	}
	for _, old := range legacy {
		if err == nil && old == d.ID {
			err = fmt.Errorf("%s lists its own id as a legacy id", d.ID)
		}
		if cur, ok := r.oldPlugins[old]; err == nil && ok {
			err = fmt.Errorf("%w: %q is already a legacy id of %q", ErrConflict, old, cur)
		}
	}
	if err != nil {
		err = fmt.Errorf("%s (%s) refused: %w", d.ID, d.Origin, err)
		r.problems = append(r.problems, docProblem(d.Plugin, err))
		return err
	}
	d.Unavailable = r.unavailable(d)
	r.docs[d.ID] = d
	for _, old := range legacy {
		r.oldPlugins[old] = d.ID
	}
	for _, t := range d.Tools {
		r.tools[t.ID] = t
		r.models[t.ModelName] = t
	}
	return nil
}

// dropFor removes the document (not native) that holds id as its id or a
// legacy id, noting why. r.mu is held.
func (r *Registry) dropFor(id string) {
	prev, ok := r.docs[id]
	if cur, old := r.oldPlugins[id]; !ok && old {
		prev, ok = r.docs[cur]
	}
	if !ok || prev.Origin == Native {
		return
	}
	delete(r.docs, prev.ID)
	for old, cur := range r.oldPlugins {
		if cur == prev.ID {
			delete(r.oldPlugins, old)
		}
	}
	for _, t := range prev.Tools {
		delete(r.tools, t.ID)
		delete(r.models, t.ModelName)
	}
	r.problems = append(r.problems, docProblem(prev.Plugin, fmt.Errorf("%s (%s) dropped: %w: %q is the id of the host's native tools", prev.ID, prev.Origin, ErrConflict, id)))
}

func (r *Registry) unavailable(d *Document) string {
	if r.caps == nil || d.Plugin == nil {
		return ""
	}
	var missing []string
	for _, c := range d.Plugin.Requires {
		if !r.caps[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "this device lacks " + strings.Join(missing, ", ")
}

// Problems lists the documents that were refused, and why.
func (r *Registry) Problems() []error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]error(nil), r.problems...)
}

// Documents lists the documents by id.
func (r *Registry) Documents() []*Document {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Document, 0, len(r.docs))
	for _, d := range r.docs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Document returns a document by its id or a legacy id.
func (r *Registry) Document(id string) (*Document, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.document(id)
}

func (r *Registry) document(id string) (*Document, bool) {
	if d, ok := r.docs[id]; ok {
		return d, true
	}
	if cur, ok := r.oldPlugins[id]; ok {
		return r.docs[cur], true
	}
	return nil, false
}

// Lookup finds a tool by its id ("plugin.tool"), its model name
// ("plugin__tool") or a legacy id: an old plugin id with the current or an
// old tool name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if t, ok := r.tools[name]; ok {
		return t, true
	}
	if t, ok := r.models[name]; ok {
		return t, true
	}
	plugin, tool, ok := strings.Cut(name, "__")
	if !ok {
		plugin, tool, ok = strings.Cut(name, ".")
	}
	if !ok {
		return nil, false
	}
	d, ok := r.document(plugin)
	if !ok || d.Plugin == nil {
		if ok {
			return toolNamed(d, tool)
		}
		return nil, false
	}
	if t, ok := toolNamed(d, tool); ok {
		return t, true
	}
	lg := d.Plugin.Legacy.Tools
	if cur, ok := lg[plugin+"."+tool]; ok {
		return toolNamed(d, cur)
	}
	if cur, ok := lg[tool]; ok {
		return toolNamed(d, cur)
	}
	return nil, false
}

func toolNamed(d *Document, name string) (*Tool, bool) {
	for _, t := range d.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// ResolveWidget maps a widget key, possibly of an older release ("oldid" or
// an old key), to the current plugin id and widget key.
func (r *Registry) ResolveWidget(plugin, key string) (string, string, bool) {
	d, ok := r.Document(plugin)
	if !ok || d.Plugin == nil {
		return "", "", false
	}
	for _, w := range d.Plugin.Contributes.Widgets {
		if w.Key == key {
			return d.ID, key, true
		}
	}
	// legacy.widgets keys are "<old plugin>.<widget>" as the reference
	// writes them; a bare old key is the older spelling.
	if cur, ok := d.Plugin.Legacy.Widgets[plugin+"."+key]; ok {
		return d.ID, cur, true
	}
	if cur, ok := d.Plugin.Legacy.Widgets[key]; ok {
		return d.ID, cur, true
	}
	return "", "", false
}
