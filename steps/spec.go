package steps

import (
	"context"

	"go.yaml.in/yaml/v3"
)

// Spec documents a step kind: what the reference, lint and `explain` show.
type Spec struct {
	Kind    string  // the step's key, e.g. "request"
	Summary string  // one line
	Short   string  // the scalar form, when the kind takes one ("a jq program")
	Fields  []Field // the mapping form's keys
	Example string  // a YAML step list that runs
	Caps    Caps
}

// Field is one key of a kind's mapping.
type Field struct {
	Name     string
	Type     string // "jq", "template", "css", "int", "duration", "steps", "map of templates", ...
	Doc      string
	Default  string
	Required bool
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
