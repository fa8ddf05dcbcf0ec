package registry

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
)

// Answer is the user's answer to an ask: no, once, or always (once now,
// and a standing grant for the tool from then on; the reference's
// ctx.grant).
type Answer string

// The answers. Anything else an Answerer returns counts as AnswerNo.
const (
	AnswerNo     Answer = "no"
	AnswerOnce   Answer = "once"
	AnswerAlways Answer = "always"
)

// Answerer is an Approver that can answer once or always. Authorize uses
// Answer when the Approver has it, else Approve (yes is once).
type Answerer interface {
	Answer(ctx context.Context, req ApprovalRequest) (Answer, error)
}

// AnswerFunc adapts a function to Answerer; it is an Approver too.
type AnswerFunc func(ctx context.Context, req ApprovalRequest) (Answer, error)

// Answer calls f.
func (f AnswerFunc) Answer(ctx context.Context, req ApprovalRequest) (Answer, error) {
	return f(ctx, req)
}

// Approve is yes when f answers once or always.
func (f AnswerFunc) Approve(ctx context.Context, req ApprovalRequest) (bool, error) {
	a, err := f(ctx, req)
	return err == nil && (a == AnswerOnce || a == AnswerAlways), err
}

// ApproveAlways answers always to every ask (`harness run
// --approve=always`): once where no standing grant may be given.
var ApproveAlways Approver = AnswerFunc(func(context.Context, ApprovalRequest) (Answer, error) { return AnswerAlways, nil })

// answer asks ap. An always where the request offers none is once; an
// unknown answer or an error is no.
func answer(ctx context.Context, ap Approver, req ApprovalRequest) (Answer, error) {
	a := AnswerNo
	var err error
	if an, ok := ap.(Answerer); ok {
		a, err = an.Answer(ctx, req)
	} else {
		var yes bool
		if yes, err = ap.Approve(ctx, req); yes {
			a = AnswerOnce
		}
	}
	switch {
	case err != nil:
		return AnswerNo, err
	case a == AnswerAlways && !req.Always:
		return AnswerOnce, nil
	case a == AnswerOnce, a == AnswerAlways:
		return a, nil
	}
	return AnswerNo, nil
}

// Grant is a standing grant: the user answered always to an ask of one
// tool. It lets the agent's later calls of that tool run without asking
// while the tool is what the user saw: the same document content (Hash),
// trust and effective effect. See Decide for where it never applies.
type Grant struct {
	Plugin  string          `json:"plugin"`
	Tool    string          `json:"tool"` // the name inside the plugin
	Effect  manifest.Effect `json:"effect"`
	Trust   Trust           `json:"trust"`
	Hash    string          `json:"hash"` // the document's content hash (h1:…), or its definition's for native and remote tools
	Granted time.Time       `json:"granted"`
}

var grantToolRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// valid reports whether a stored grant is well formed; any other is
// ignored (a damaged or hostile file grants nothing).
func (g Grant) valid() bool {
	_, terr := ParseTrust(string(g.Trust))
	return idRE.MatchString(g.Plugin) && len(g.Plugin) <= manifest.MaxIDLen && grantToolRE.MatchString(g.Tool) &&
		g.Effect.Rank() >= 0 && terr == nil && g.Hash != "" && len(g.Hash) <= 128
}

// GrantStore is a Store that keeps standing grants. MemoryStore,
// HomeStore and StateStore are; with another Store an always is once.
type GrantStore interface {
	// Grants returns the stored grants (well-formed ones only).
	Grants() ([]Grant, error)
	// UpdateGrants replaces the grants with what fn returns, atomically.
	UpdateGrants(fn func([]Grant) []Grant) error
}

// MaxGrants bounds the grants kept; the oldest go first.
const MaxGrants = 1024

func keepGrants(gs []Grant) []Grant {
	out := slices.DeleteFunc(slices.Clone(gs), func(g Grant) bool { return !g.valid() })
	if len(out) > MaxGrants {
		slices.SortStableFunc(out, func(a, b Grant) int { return a.Granted.Compare(b.Granted) })
		out = out[len(out)-MaxGrants:]
	}
	return out
}

// Grants implements GrantStore.
func (m *MemoryStore) Grants() ([]Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.grants), nil
}

// UpdateGrants implements GrantStore.
func (m *MemoryStore) UpdateGrants(fn func([]Grant) []Grant) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.grants = keepGrants(fn(slices.Clone(m.grants)))
	return nil
}

// GrantsFile is the home's file of standing grants.
const GrantsFile = "grants.json"

// grantsFile is the shape of grants.json.
type grantsFile struct {
	Grants []Grant `json:"grants"`
}

const maxGrantsBytes = 1 << 20

// Grants implements GrantStore. A file that cannot be read or parsed is an
// error (and grants nothing); entries that are not well formed are left
// out.
func (h *HomeStore) Grants() ([]Grant, error) {
	var f grantsFile
	if err := readJSON(filepath.Join(h.Dir, GrantsFile), maxGrantsBytes, &f); err != nil {
		return nil, err
	}
	return keepGrants(f.Grants), nil
}

// UpdateGrants implements GrantStore: under the home's lock (the one
// state.json is changed under, so other processes' changes are not lost)
// and written atomically. A file that does not parse is replaced: losing
// grants only ever makes a call ask again.
func (h *HomeStore) UpdateGrants(fn func([]Grant) []Grant) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	unlock, err := lockHome(h.Dir)
	if err != nil {
		return err
	}
	defer unlock()
	path := filepath.Join(h.Dir, GrantsFile)
	var f grantsFile
	if err := readJSON(path, maxGrantsBytes, &f); err != nil {
		if !isNotValid(err) {
			return err
		}
		f = grantsFile{}
	}
	f.Grants = keepGrants(fn(keepGrants(f.Grants)))
	if f.Grants == nil {
		f.Grants = []Grant{}
	}
	return writeJSON(path, f)
}

// notValidError is readJSON's error for a file that does not parse.
type notValidError struct {
	path string
	err  error
}

func (e *notValidError) Error() string { return fmt.Sprintf("%s is not valid: %v", e.path, e.err) }

// isNotValid reports readJSON's error for a file that does not parse.
func isNotValid(err error) bool {
	var ne *notValidError
	return errors.As(err, &ne)
}

// lockHome takes the home folder's lock file (fetch.LockFile), as the
// installed documents' store does for state.json.
func lockHome(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return fetch.LockHome(ctx, dir)
}

// Grants implements GrantStore (in the home folder, beside
// permissions.json).
func (s *StateStore) Grants() ([]Grant, error) { return s.Home.Grants() }

// UpdateGrants implements GrantStore.
func (s *StateStore) UpdateGrants(fn func([]Grant) []Grant) error { return s.Home.UpdateGrants(fn) }

// standing reports whether a standing grant may ever apply to t: never to
// an alwaysAsk or userOnly tool, never to money (a payment is asked for
// each time), and only where the trust's bounds allow auto for the effect
// (a grant is one tool's auto): so a community document's write, money
// and public tools always ask, as the reference says.
func standing(t *Tool) bool {
	return !t.AlwaysAsk && !t.UserOnly && t.Effect != manifest.Money && Loosest(t.doc.Trust, t.Effect) == manifest.Auto
}

// grantHash is what a grant of t is bound to: the document's content hash,
// or for a native or remote tool a hash of its definition. "" when it
// cannot be had (then nothing is granted).
func (t *Tool) grantHash() string {
	d := t.doc
	if d.Plugin != nil {
		d.hashOnce.Do(func() { d.hash, _ = d.Plugin.Files.Hash() })
		return d.hash
	}
	b, err := json.Marshal([]any{d.ID, d.Origin, d.Description, t.Name, t.Description, t.Effect, t.Input, t.Flags})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return "def:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

func (r *Registry) grantStore() GrantStore {
	gs, _ := r.store.(GrantStore)
	return gs
}

// granted reports whether a stored grant covers t as it is now. A store
// that cannot be read grants nothing.
func (r *Registry) granted(t *Tool) bool {
	gs := r.grantStore()
	if gs == nil {
		return false
	}
	list, err := gs.Grants()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(list, func(g Grant) bool { return r.applies(g, t) })
}

func (r *Registry) applies(g Grant, t *Tool) bool {
	h := t.grantHash()
	return g.valid() && g.Plugin == t.Plugin && g.Tool == t.Name && g.Effect == t.Effect && g.Trust == t.doc.Trust && h != "" && g.Hash == h
}

// grant stores a standing grant for t (replacing any earlier one).
func (r *Registry) grant(t *Tool) error {
	gs := r.grantStore()
	if gs == nil {
		return errors.New("this host keeps no standing grants")
	}
	h := t.grantHash()
	if h == "" {
		return fmt.Errorf("%s: its content cannot be hashed", t.ID)
	}
	g := Grant{Plugin: t.Plugin, Tool: t.Name, Effect: t.Effect, Trust: t.doc.Trust, Hash: h, Granted: r.cache.now().UTC()}
	return gs.UpdateGrants(func(list []Grant) []Grant {
		list = slices.DeleteFunc(list, func(o Grant) bool { return o.Plugin == g.Plugin && o.Tool == g.Tool })
		return append(list, g)
	})
}

// GrantState is a stored grant and whether it applies to the tool as the
// registry has it now.
type GrantState struct {
	Grant
	Applies bool `json:"applies"`
	// Why says why it does not apply ("" when it does).
	Why string `json:"why,omitempty"`
}

// Grants lists the stored standing grants of plugin (every plugin's for
// ""), by plugin and tool, each with whether it applies now. A legacy id
// names its current plugin too (grants kept under the old id never apply
// to it, but are listed).
func (r *Registry) Grants(plugin string) ([]GrantState, error) {
	gs := r.grantStore()
	if gs == nil {
		return nil, nil
	}
	list, err := gs.Grants()
	if err != nil {
		return nil, err
	}
	current := plugin
	if d, ok := r.Document(plugin); ok {
		current = d.ID
	}
	out := []GrantState{}
	for _, g := range list {
		if plugin != "" && g.Plugin != plugin && g.Plugin != current {
			continue
		}
		st := GrantState{Grant: g}
		t, ok := r.Lookup(g.Plugin + "." + g.Tool)
		switch {
		case !ok || t.Plugin != g.Plugin || t.Name != g.Tool:
			st.Why = "no such tool now"
		case !standing(t):
			st.Why = "the rules never let this tool run on a standing grant"
		case r.applies(g, t):
			st.Applies = true
		default:
			st.Why = "the tool changed since (its document, trust or effect)"
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b GrantState) int {
		if a.Plugin != b.Plugin {
			return cmpString(a.Plugin, b.Plugin)
		}
		return cmpString(a.Tool, b.Tool)
	})
	return out, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Revoke deletes the standing grants of plugin's tool (every tool's when
// tool is ""), and returns how many there were. A legacy id names its
// current plugin too; a plugin the registry no longer has can still be
// named.
func (r *Registry) Revoke(plugin, tool string) (int, error) {
	gs := r.grantStore()
	if gs == nil {
		return 0, nil
	}
	current := plugin
	if d, ok := r.Document(plugin); ok {
		current = d.ID
	}
	n := 0
	err := gs.UpdateGrants(func(list []Grant) []Grant {
		return slices.DeleteFunc(list, func(g Grant) bool {
			del := (g.Plugin == plugin || g.Plugin == current) && (tool == "" || g.Tool == tool)
			if del {
				n++
			}
			return del
		})
	})
	return n, err
}

// forgetGrants deletes plugin id's grants in the home folder dir (for
// ForgetData); it reports whether there were any.
func forgetGrants(dir, id string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, GrantsFile)); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	had := false
	err := (&HomeStore{Dir: dir}).UpdateGrants(func(list []Grant) []Grant {
		return slices.DeleteFunc(list, func(g Grant) bool {
			had = had || g.Plugin == id
			return g.Plugin == id
		})
	})
	return had, err
}
