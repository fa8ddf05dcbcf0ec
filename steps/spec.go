package steps

import (
	"context"
	"slices"

	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

// Spec declares a step kind once: what the decoder, lint, the reference,
// `explain` and the JSON Schema read.
type Spec struct {
	Kind    string // the step's key, e.g. "request"
	Summary string // one line
	// The value under the kind's key: a scalar of type Scalar (Short says
	// what it is in words, "a jq program"), a mapping declared by Decl, or
	// either.
	Short   string
	Scalar  yamlx.Type
	Decl    *yamlx.Decl
	Example string // a YAML step list that runs
	Caps    Caps
}

// Fields are the declared keys of the kind's mapping form (none without
// one), a copy; a field's Type.Name and DefaultText word it as the
// reference does.
func (s Spec) Fields() []yamlx.Field {
	if s.Decl == nil {
		return nil
	}
	return slices.Clone(s.Decl.Fields)
}

// Caps are what a kind may do, for review and for the access check.
type Caps struct {
	Network bool // sends requests
	KV      bool // reads or writes the plugin's store (needs the kv ability)
	Ends    bool // ends the tool
	Nests   bool // holds sub-steps
}

// Words says what the capabilities mean, for the reference and explain:
// "sends requests", "needs the kv ability", ….
func (c Caps) Words() []string {
	var out []string
	if c.Network {
		out = append(out, "sends requests")
	}
	if c.KV {
		out = append(out, "needs the kv ability")
	}
	if c.Ends {
		out = append(out, "ends the tool")
	}
	if c.Nests {
		out = append(out, "holds sub-steps")
	}
	return out
}

// Step is one decoded step. Run reads its input from f.Dot and returns its
// output; it may end the tool with f.End or f.EndStatus.
type Step interface {
	Run(ctx context.Context, f *Frame) (any, error)
}

// DecodeFunc decodes the value under a kind's key (a scalar or a mapping)
// into a Step, reporting problems to c. It returns nil when the step is bad.
type DecodeFunc func(c *Compiler, n *yaml.Node) Step

// scalar is the decoder of a kind that has only its scalar form: the value
// decodes with spec.Scalar (to a T) and mk makes the step of it.
func scalar[T any](spec *Spec, mk func(T) Step) DecodeFunc {
	return func(c *Compiler, n *yaml.Node) Step {
		v, ok := spec.Scalar.Decode(c.ctx(), n, spec.Kind)
		if !ok {
			return nil
		}
		return mk(v.(T))
	}
}
