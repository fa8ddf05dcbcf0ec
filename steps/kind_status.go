package steps

import (
	"context"
	"regexp"

	"go.yaml.in/yaml/v3"
)

var statusSpec = Spec{
	Kind: "status",
	Summary: "End the tool with a status object for a recoverable state, e.g. {status: verification_required, methods: [sms], message: …}. " +
		"Its strings are templates; a string that is one ${ } keeps the value's type.",
	Short: "a mapping with status: NAME ([a-z][a-z_]*) and any other keys",
	Example: `- status:
    status: verification_required
    methods: [sms]
    message: "Enter the code sent to your phone"`,
	Caps: Caps{Ends: true},
}

func init() { builtin.mustRegister(statusSpec, decodeStatus) }

var statusRE = regexp.MustCompile(`^[a-z][a-z_]*$`)

type statusStep struct{ v *valueTemplate }

func decodeStatus(c *Compiler, n *yaml.Node) Step {
	m, ok := c.Doc.Mapping(n, "status", nil, c.L)
	if !ok {
		return nil
	}
	f, ok := m.Get("status")
	if !ok {
		c.Errorf(n, "status needs a status key naming the state (e.g. verification_required)")
		return nil
	}
	if s, ok := c.Doc.String(f.Value, "status.status", c.L); !ok {
		return nil
	} else if !statusRE.MatchString(s) {
		c.Errorf(f.Value, "status.status %q must match [a-z][a-z_]*", s)
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
