package steps

import (
	"context"
)

var returnSpec = Spec{
	Kind:    "return",
	Summary: "End the tool with the first result of a jq program as its result.",
	Short:   "a jq program",
	Scalar:  JQType,
	Example: `- return: '{building: $input.building, count: 3}'`,
	Caps:    Caps{Ends: true},
}

func init() {
	builtin.mustRegister(returnSpec, scalar(&returnSpec, func(q *JQ) Step { return &returnStep{q} }))
}

type returnStep struct{ q *JQ }

func (s *returnStep) Run(ctx context.Context, f *Frame) (any, error) {
	v, err := s.q.First(ctx, f, f.Dot)
	if err != nil {
		return nil, err
	}
	f.End(v)
	return v, nil
}

func (s *returnStep) dotUse() ([]*JQ, []string) { return []*JQ{s.q}, nil }

var _ Step = (*returnStep)(nil)
