package steps

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

// Registry maps step kinds to their specs and decoders. The builtin
// registry is filled by each kind's init and never changes afterwards; tests
// build their own with NewRegistry.
type Registry struct {
	kinds map[string]entry

	mu   sync.Mutex
	step *yamlx.Decl // the declaration of a step, built from the kinds
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
	if spec.Scalar == nil && spec.Decl == nil {
		return fmt.Errorf("kind %q declares neither a scalar form nor a mapping", spec.Kind)
	}
	if spec.Scalar != nil && spec.Short == "" {
		return fmt.Errorf("kind %q needs Short, the words for its scalar form", spec.Kind)
	}
	if spec.Decl != nil && spec.Decl.Name != spec.Kind {
		return fmt.Errorf("kind %q declares a mapping named %q", spec.Kind, spec.Decl.Name)
	}
	if _, ok := modifierDecl.Field(spec.Kind); ok {
		return fmt.Errorf("kind %q would shadow a step modifier", spec.Kind)
	}
	if _, dup := r.kinds[spec.Kind]; dup {
		return fmt.Errorf("kind %q is registered twice", spec.Kind)
	}
	r.mu.Lock()
	r.kinds[spec.Kind] = entry{spec, decode}
	r.step = nil
	r.mu.Unlock()
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

// modifierDecl declares the keys every step may carry beside its kind.
var modifierDecl = &yamlx.Decl{Name: "a step", Fields: []yamlx.Field{
	{Name: "as", Type: NameType, Doc: "Binds the step's output to $NAME for every later step ([A-Za-z_][A-Za-z0-9_]*; input and prefs are reserved). " +
		"Binding a name again replaces its value."},
	{Name: "if", Type: JQType, Doc: "A jq condition: the step runs only when its first result is neither false nor null. " +
		"A skipped step binds its as name to null and passes . through unchanged."},
}}

// Modifiers are the declared keys every step may carry beside its kind.
func Modifiers() []yamlx.Field { return slices.Clone(modifierDecl.Fields) }

// stepDecl declares a step: the modifiers and one key per kind, whose
// value the kind decodes. It is built once per set of kinds.
func (r *Registry) stepDecl() *yamlx.Decl {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.step != nil {
		return r.step
	}
	d := &yamlx.Decl{Name: modifierDecl.Name, Fields: slices.Clone(modifierDecl.Fields)}
	for _, k := range slices.Sorted(maps.Keys(r.kinds)) {
		d.Fields = append(d.Fields, yamlx.Field{Name: k, Type: kindType{r.kinds[k].spec}, Doc: r.kinds[k].spec.Summary})
	}
	r.step = d
	return d
}

// kindType is the value under a kind's key inside a step: kept as a node
// for the kind's decoder; its declaration gives hints on misplaced keys.
type kindType struct{ spec Spec }

func (t kindType) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) { return n, true }
func (t kindType) Schema(*yamlx.Gen) map[string]any                           { return yamlx.Ref("kind." + t.spec.Kind) }
func (t kindType) Name() string                                               { return t.spec.Kind }
func (t kindType) Decls() []*yamlx.Decl {
	if t.spec.Decl == nil {
		return nil
	}
	return []*yamlx.Decl{t.spec.Decl}
}
