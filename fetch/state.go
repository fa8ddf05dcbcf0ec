package fetch

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// StateVersion is the state file's format version.
const StateVersion = 1

// State is the content of state.json: the installed plugins by id, and the
// update checks of the bundled official documents. Fields this version does
// not know are kept as they were (a newer engine's state survives an older
// one's write).
type State struct {
	Version int               `json:"version"`
	Plugins map[string]*Entry `json:"plugins"`
	// Bundled is the check state of each bundled document that was checked
	// against its link, by id: the link and ref it follows, the commit last
	// seen, the time of the last check and its error, a pending update, and
	// (Hash, Version, Trust, lastUpdate) an update applied over the bundled
	// copy, stored under store/ like an installed version. Hash is "" while
	// the bundled copy itself is in use. These are never installed plugins:
	// their settings stay where the bundled document's are.
	Bundled map[string]*Entry `json:"bundled,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

// Entry is one installed plugin.
type Entry struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`

	Link string `json:"link"` // canonical link (a local path is absolute)
	Kind Kind   `json:"kind"`
	// Git links: the ref the link resolved to, the pinned commit and the
	// folder inside the repository.
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
	Path   string `json:"path,omitempty"`
	// URL documents: the validators for conditional re-checks.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
	// SeenHash (bundled documents only) is the content hash of the copy in
	// use when Commit was seen: Commit stands for that copy only, and a
	// build that bundles another copy has the link fetched again.
	SeenHash string `json:"seenHash,omitempty"`

	Hash  string `json:"hash"`  // content hash of the installed files (store/<hash>)
	Trust string `json:"trust"` // official | community

	Installed   time.Time `json:"installed"`
	LastChecked time.Time `json:"lastChecked,omitzero"`
	Enabled     bool      `json:"enabled"`
	// Modes maps an effect (read, write, money, public) to auto | ask |
	// off; filled by the permission rules. Other keys are kept as they are
	// and have no effect.
	Modes map[string]string `json:"modes,omitempty"`

	Pending   *Pending `json:"pending,omitempty"`
	LastError string   `json:"lastError,omitempty"`
	// Quarantined says why the stored files are not used (they no longer
	// match Hash); the plugin is unusable until installed again.
	Quarantined string `json:"quarantined,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

// Pending is an update held until the user accepts it.
type Pending struct {
	Hash         string    `json:"hash"`
	Version      string    `json:"version,omitempty"`
	Ref          string    `json:"ref,omitempty"`
	Commit       string    `json:"commit,omitempty"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"lastModified,omitempty"`
	Found        time.Time `json:"found,omitzero"`
	Wider        bool      `json:"wider"`
	Downgrade    bool      `json:"downgrade,omitempty"`
	// Changes is the diff summary, one line per change.
	Changes []string `json:"changes,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

type (
	stateAlias   State
	entryAlias   Entry
	pendingAlias Pending
)

// MarshalJSON writes the known fields and the kept unknown ones.
func (s State) MarshalJSON() ([]byte, error) { return marshalExtra(stateAlias(s), s.Extra) }

// UnmarshalJSON reads the known fields and keeps the others.
func (s *State) UnmarshalJSON(b []byte) error {
	var a stateAlias
	extra, err := unmarshalExtra(b, &a)
	*s = State(a)
	s.Extra = extra
	return err
}

// MarshalJSON writes the known fields and the kept unknown ones.
func (e Entry) MarshalJSON() ([]byte, error) { return marshalExtra(entryAlias(e), e.Extra) }

// UnmarshalJSON reads the known fields and keeps the others.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var a entryAlias
	extra, err := unmarshalExtra(b, &a)
	*e = Entry(a)
	e.Extra = extra
	return err
}

// MarshalJSON writes the known fields and the kept unknown ones.
func (p Pending) MarshalJSON() ([]byte, error) { return marshalExtra(pendingAlias(p), p.Extra) }

// UnmarshalJSON reads the known fields and keeps the others.
func (p *Pending) UnmarshalJSON(b []byte) error {
	var a pendingAlias
	extra, err := unmarshalExtra(b, &a)
	*p = Pending(a)
	p.Extra = extra
	return err
}

func marshalExtra(v any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, raw := range extra {
		if _, known := m[k]; !known {
			m[k] = raw
		}
	}
	return json.Marshal(m)
}

func unmarshalExtra(b []byte, v any) (map[string]json.RawMessage, error) {
	if err := json.Unmarshal(b, v); err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range jsonKeys(reflect.TypeOf(v).Elem()) {
		delete(m, k)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

func jsonKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = t.Field(i).Name
		}
		out = append(out, name)
	}
	return out
}

// LastUpdate records the last update applied to an installed plugin, so
// that the user can see what changed (even an update that only rewrote the
// instructions). It is kept in the entry under "lastUpdate".
type LastUpdate struct {
	FromVersion string    `json:"fromVersion,omitempty"`
	ToVersion   string    `json:"toVersion,omitempty"`
	FromHash    string    `json:"fromHash"`
	ToHash      string    `json:"toHash"`
	At          time.Time `json:"at"`
	// Accepted is true when the user accepted it (a wider update or a
	// downgrade); false when it applied by itself (same or narrower).
	Accepted bool `json:"accepted"`
	Wider    bool `json:"wider"`
	// Changes is the diff summary, one line per change ("+" widens,
	// "-" narrows or removes).
	Changes []string `json:"changes"`
}

const (
	lastUpdateKey = "lastUpdate"
	warningKey    = "warning"
)

// LastUpdate returns the record of the last applied update, or nil.
func (e *Entry) LastUpdate() *LastUpdate {
	raw, ok := e.Extra[lastUpdateKey]
	if !ok {
		return nil
	}
	var u LastUpdate
	if json.Unmarshal(raw, &u) != nil {
		return nil
	}
	return &u
}

// SetLastUpdate records the last applied update (nil forgets it).
func (e *Entry) SetLastUpdate(u *LastUpdate) {
	if u == nil {
		delete(e.Extra, lastUpdateKey)
		return
	}
	b, err := json.Marshal(u)
	if err != nil {
		return
	}
	if e.Extra == nil {
		e.Extra = map[string]json.RawMessage{}
	}
	e.Extra[lastUpdateKey] = b
}

// Warning is why a pending update is held (a downgrade), or "".
func (p *Pending) Warning() string {
	var w string
	if raw, ok := p.Extra[warningKey]; ok {
		_ = json.Unmarshal(raw, &w)
	}
	return w
}

// SetWarning records why a pending update is held.
func (p *Pending) SetWarning(w string) {
	if w == "" {
		delete(p.Extra, warningKey)
		return
	}
	b, _ := json.Marshal(w)
	if p.Extra == nil {
		p.Extra = map[string]json.RawMessage{}
	}
	p.Extra[warningKey] = b
}
