package steps

import (
	"context"
)

var failSpec = Spec{
	Kind:    "fail",
	Summary: "End the tool with an error whose message is the template: a message the user can act on.",
	Short:   "a template",
	Scalar:  TemplateType{Esc: Text},
	Example: `- if: 'true'
  fail: "The portal answered ${ 503 }"`,
	Caps: Caps{Ends: true},
}

func init() {
	builtin.mustRegister(failSpec, scalar(&failSpec, func(t *Template) Step { return &failStep{t} }))
}

type failStep struct{ t *Template }

func (s *failStep) Run(ctx context.Context, f *Frame) (any, error) {
	msg, err := s.t.Render(ctx, f, f.Dot)
	if err != nil {
		return nil, err
	}
	msg, _ = cutText(f.Redact, msg, 2000)
	return nil, &Failure{Msg: CleanString(msg)}
}

var _ Step = (*failStep)(nil)
