package steps

import (
	"context"
)

var jqSpec = Spec{
	Kind:    "jq",
	Summary: "Run a jq program on `.`; the output is its first result (wrap it in [ ] to collect many).",
	Short:   "a jq program",
	Scalar:  JQType,
	Example: `- jq: '{rooms: [{name: "101", capacity: 80}]}'
- jq: '[.rooms[] | {room: .name, seats: .capacity}]'`,
}

func init() { builtin.mustRegister(jqSpec, scalar(&jqSpec, func(q *JQ) Step { return &jqStep{q} })) }

type jqStep struct{ q *JQ }

func (s *jqStep) Run(ctx context.Context, f *Frame) (any, error) { return s.q.First(ctx, f, f.Dot) }

func (s *jqStep) dotUse() ([]*JQ, []string) { return []*JQ{s.q}, nil }

var _ Step = (*jqStep)(nil)
