package registry

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"

	"golang.org/x/sync/errgroup"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/remote"
	"github.com/pkuinfo/harness/update"
)

// StateStore keeps installed plugins' modes and enabled flags in the fetch
// store's state.json (Entry.Modes, Entry.Enabled), and everything else
// (bundled and native plugins' settings, every plugin's preference values)
// in a HomeStore in the same folder.
type StateStore struct {
	Fetch *fetch.Store
	Home  *HomeStore
}

// NewStateStore makes the store of the home folder a fetch.Store uses.
func NewStateStore(fs *fetch.Store) *StateStore {
	return &StateStore{Fetch: fs, Home: &HomeStore{Dir: fs.Dir()}}
}

// Settings implements Store: installed plugins from state.json over the
// others from permissions.json.
func (s *StateStore) Settings() (map[string]PluginSettings, error) {
	out, err := s.Home.Settings()
	if err != nil {
		return nil, err
	}
	st, err := s.Fetch.Load()
	if err != nil {
		return nil, err
	}
	for id, e := range st.Plugins {
		ps := PluginSettings{Disabled: !e.Enabled, Modes: map[manifest.Effect]manifest.Mode{}}
		for k, v := range e.Modes {
			if manifest.Effect(k).Rank() >= 0 {
				ps.Modes[manifest.Effect(k)] = manifest.Mode(v)
			}
		}
		out[id] = ps
	}
	return out, nil
}

// UpdateSettings implements Store.
func (s *StateStore) UpdateSettings(id string, fn func(*PluginSettings)) error {
	installed := false
	err := s.Fetch.Update(context.Background(), func(tx *fetch.Tx) error {
		e, ok := tx.State.Plugins[id]
		if !ok {
			return nil
		}
		installed = true
		ps := PluginSettings{Disabled: !e.Enabled, Modes: map[manifest.Effect]manifest.Mode{}}
		for k, v := range e.Modes {
			if manifest.Effect(k).Rank() >= 0 {
				ps.Modes[manifest.Effect(k)] = manifest.Mode(v)
			}
		}
		fn(&ps)
		modes := map[string]string{}
		for k, v := range e.Modes {
			if manifest.Effect(k).Rank() < 0 { // per-tool entries stay
				modes[k] = v
			}
		}
		for k, v := range ps.Modes {
			modes[string(k)] = string(v)
		}
		if len(modes) == 0 {
			modes = nil
		}
		e.Modes, e.Enabled = modes, !ps.Disabled
		return nil
	})
	if err != nil || installed {
		return err
	}
	return s.Home.UpdateSettings(id, fn)
}

// Prefs implements Store.
func (s *StateStore) Prefs(id string) (map[string]any, error) { return s.Home.Prefs(id) }

// SetPrefs implements Store.
func (s *StateStore) SetPrefs(id string, v map[string]any) error { return s.Home.SetPrefs(id, v) }

// Bundle is a bundled document: official, and core when the host says so
// (or an official one's core: true).
// Files are the copy in use: the bundled files, or an update of them the
// host fetched from the bundle's link (update.Current), whose trust is
// Trust ("" is Official; an update from a link outside the official
// repository is Community).
type Bundle struct {
	Files manifest.Files
	Core  bool
	Trust Trust
}

// OpenHome builds the registry of a home folder: the bundled documents and
// the installed ones (verified against their hash; a quarantined or invalid
// one is left out and listed in Problems), with settings kept in the home
// folder. An installed document replaces a bundled one of the same id: an
// official one is a newer official release; a community one is the user's
// choice, made at install after a review sheet that says so, and it keeps
// community trust and bounds. A core bundled document is replaced only by an
// official one. Any other clash of ids refuses the installed document. The
// bundled copy is the floor of the official releases: an installed official
// document of a lower version than the bundled one of its id is left out
// (the bundled copy is used), as a newer build's bundled copy takes the
// place of an older stored update (update.BundledWins).
func OpenHome(ctx context.Context, fs *fetch.Store, bundled []Bundle, opts ...Option) (*Registry, error) {
	installed, err := fs.LoadInstalled(ctx)
	if err != nil {
		return nil, err
	}
	r := New(append([]Option{WithStore(NewStateStore(fs))}, opts...)...)
	addHome(r, installed, bundled)
	if r.remoteConn != nil {
		if err := r.addRemotes(remote.Store{Dir: fs.Dir()}); err != nil {
			r.note(err)
		}
	}
	return r, nil
}

// addHome adds the bundled documents and then the installed ones, as
// OpenHome does; it returns why each installed id was refused.
func addHome(r *Registry, installed []fetch.Installed, bundled []Bundle) map[string]error {
	byID := map[string]*fetch.Installed{}
	for i, in := range installed {
		if in.Err == nil {
			byID[in.Entry.ID] = &installed[i]
		}
	}
	installed = append([]fetch.Installed(nil), installed...)
	sort.Slice(installed, func(i, j int) bool { return installed[i].Entry.ID < installed[j].Entry.ID })
	// Every document is parsed and its tools' effects read (a compile of
	// its steps) at once, on every core: that is most of a start's time.
	// They are added one by one, in order, below.
	sets := make([]manifest.Files, 0, len(bundled)+len(installed))
	for _, b := range bundled {
		sets = append(sets, b.Files)
	}
	for _, in := range installed {
		if in.Err == nil {
			sets = append(sets, in.Files)
		}
	}
	docs := r.prepareAll(sets)
	installedDocs := map[string]prepared{}
	for i, in := range slices.DeleteFunc(slices.Clone(installed), func(in fetch.Installed) bool { return in.Err != nil }) {
		installedDocs[in.Entry.ID] = docs[len(bundled)+i]
	}
	floor := map[string]bool{} // installed official ids below their bundled copy
	for i, b := range bundled {
		d := docs[i]
		if d.l.HasErrors() {
			r.note(docProblem(d.p, fmt.Errorf("bundled document %s is invalid: %v", d.p.ID, d.l.Err())))
			continue
		}
		trust := b.Trust
		if trust == "" {
			trust = Official
		}
		core := b.Core || d.p.Core && trust == Official // a document's core: true counts only here
		if in, ok := byID[d.p.ID]; ok && (!core || in.Entry.Trust == string(Official)) {
			if in.Entry.Trust != string(Official) || !update.BundledWins(d.p.Version, installedDocs[d.p.ID].p.Version) {
				continue // replaced by the installed document
			}
			floor[d.p.ID] = true
		}
		r.addDocument(d.p, trust, DocOptions{Origin: Bundled, Core: core}, d.effects) // a clash is noted in Problems
	}
	docs = docs[len(bundled):]
	refused := map[string]error{}
	for _, in := range installed {
		if in.Err != nil {
			r.note(&DocumentProblem{ID: in.Entry.ID, Hash: in.Entry.Hash, Err: in.Err})
			refused[in.Entry.ID] = in.Err
			continue
		}
		d := docs[0]
		docs = docs[1:]
		if floor[in.Entry.ID] {
			continue // the newer bundled copy is used
		}
		trust, err := ParseTrust(in.Entry.Trust)
		if err != nil {
			trust = Community
		}
		if _, err := r.addPrepared(d, trust, DocOptions{Origin: Installed}); err != nil { // problems are noted
			refused[in.Entry.ID] = err
		}
	}
	return refused
}

// prepared is a parsed document with its tools' effects.
type prepared struct {
	p       *manifest.Plugin
	l       diag.List
	effects map[string]interpreter.ToolEffect // nil when the document has errors
}

// prepare parses a document and reads its tools' effects.
func (r *Registry) prepare(files manifest.Files) prepared {
	p, l := manifest.Parse(files)
	d := prepared{p: p, l: l}
	if !l.HasErrors() {
		d.effects = interpreter.Effects(p, r.services)
	}
	return d
}

// prepareAll prepares each set of files, as many at once as there are
// cores, and returns them in order.
func (r *Registry) prepareAll(sets []manifest.Files) []prepared {
	out := make([]prepared, len(sets))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, files := range sets {
		g.Go(func() error {
			out[i] = r.prepare(files)
			return nil
		})
	}
	g.Wait() // prepare fails no document: its list says what is wrong
	return out
}

// CheckInstall reports whether installing p with trust, in place of any
// installed document of the same id, keeps the home folder's documents
// usable as OpenHome will load them: an error wrapping ErrConflict when p's
// id or one of its legacy ids is already claimed by a bundled or another
// installed document, or when p would push out an installed document that
// loads today.
func CheckInstall(ctx context.Context, fs *fetch.Store, bundled []Bundle, p *manifest.Plugin, trust Trust) error {
	installed, err := fs.LoadInstalled(ctx)
	if err != nil {
		return err
	}
	before := addHome(New(), installed, bundled)
	after := []fetch.Installed{{Entry: &fetch.Entry{ID: p.ID, Trust: string(trust)}, Files: p.Files}}
	for _, in := range installed {
		if in.Entry.ID != p.ID {
			after = append(after, in)
		}
	}
	refused := addHome(New(), after, bundled)
	if err := refused[p.ID]; err != nil {
		return err
	}
	for _, in := range after[1:] {
		if err := refused[in.Entry.ID]; err != nil && before[in.Entry.ID] == nil {
			return fmt.Errorf("%w: installing %s would push out the installed %s: %v", ErrConflict, p.ID, in.Entry.ID, err)
		}
	}
	return nil
}
