package steps

import (
	"context"
	"regexp"

	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

var statusSpec = Spec{
	Kind: "status",
	Summary: "End the tool with a status object for a recoverable state, e.g. {status: verification_required, methods: [sms], message: …}. " +
		"Its strings are templates; a string that is one ${ } keeps the value's type.",
	Decl: &yamlx.Decl{Name: "status", Fields: []yamlx.Field{
		{Name: "status", Type: yamlx.String{Pattern: regexp.MustCompile(`^[a-z][a-z_]*$`), Hint: "a state name ([a-z][a-z_]*, e.g. verification_required)"}, Required: true,
			Doc: "the state's name ([a-z][a-z_]*); any other keys are templates and values the status object carries"},
	}, Rest: yamlx.Later{Of: ValueType}},
	Example: `- status:
    status: verification_required
    methods: [sms]
    message: "Enter the code sent to your phone"`,
	Caps: Caps{Ends: true},
}

func init() { builtin.mustRegister(statusSpec, decodeStatus) }

type statusStep struct{ v *valueTemplate }

func decodeStatus(c *Compiler, n *yaml.Node) Step {
	if _, ok := c.Decode(n, statusSpec.Decl); !ok {
		return nil
	}
	v := c.ValueTemplate(n)
	if v == nil {
		return nil
	}
	return &statusStep{v}
}

func (s *statusStep) Run(ctx context.Context, f *Frame) (any, error) {
	v, err := s.v.Eval(ctx, f, f.Dot)
	if err != nil {
		return nil, err
	}
	f.End(v)
	return v, nil
}

var _ Step = (*statusStep)(nil)
