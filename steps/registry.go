package steps

import (
	"fmt"
	"maps"
	"slices"
)

// Registry maps step kinds to their specs and decoders. The builtin
// registry is filled by each kind's init and never changes afterwards; tests
// build their own with NewRegistry.
type Registry struct {
	kinds map[string]entry
}

type entry struct {
	spec   Spec
	decode DecodeFunc
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{kinds: map[string]entry{}} }

var builtin = NewRegistry()

// Builtin returns the registry of every kind in this package. Do not add to it.
func Builtin() *Registry { return builtin }

// Register adds a kind. It refuses a duplicate or a spec without summary.
func (r *Registry) Register(spec Spec, decode DecodeFunc) error {
	if spec.Kind == "" || spec.Summary == "" || decode == nil {
		return fmt.Errorf("kind %q needs a name, a summary and a decoder", spec.Kind)
	}
	if modifiers[spec.Kind] {
		return fmt.Errorf("kind %q would shadow a step modifier", spec.Kind)
	}
	if _, dup := r.kinds[spec.Kind]; dup {
		return fmt.Errorf("kind %q is registered twice", spec.Kind)
	}
	r.kinds[spec.Kind] = entry{spec, decode}
	return nil
}

func (r *Registry) mustRegister(spec Spec, decode DecodeFunc) {
	if err := r.Register(spec, decode); err != nil {
		panic(err)
	}
}

// Kinds lists the registered kinds, sorted.
func (r *Registry) Kinds() []string {
	return slices.Sorted(maps.Keys(r.kinds))
}

// Spec returns a kind's spec.
func (r *Registry) Spec(kind string) (Spec, bool) {
	e, ok := r.kinds[kind]
	return e.spec, ok
}

// modifiers are the keys every step may carry beside its kind.
var modifiers = map[string]bool{"as": true, "if": true}
