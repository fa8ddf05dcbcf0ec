package steps_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// A kind declared outside the package's shared files: its declaration alone
// gives the decoder's checks, the reference, and the schema.
var repeatDecl = &yamlx.Decl{Name: "repeat", Fields: []yamlx.Field{
	{Name: "text", Type: steps.TemplateType{Esc: steps.Text}, Required: true, Doc: "what to repeat"},
	{Name: "times", Type: yamlx.Int{Min: 1, Max: 9}, Default: int64(2), Doc: "how often"},
}}

type repeatStep struct {
	t *steps.Template
	n int
}

func (s repeatStep) Run(ctx context.Context, f *steps.Frame) (any, error) {
	x, err := s.t.Render(ctx, f, f.Dot)
	return strings.Repeat(x, s.n), err
}

func TestNewKindNeedsNoSharedFile(t *testing.T) {
	r := steps.NewRegistry()
	require.NoError(t, r.Register(steps.Spec{Kind: "repeat", Summary: "Repeat a text.", Decl: repeatDecl, Example: "- repeat: {text: a}"},
		func(c *steps.Compiler, n *yaml.Node) steps.Step {
			o, ok := c.Decode(n, repeatDecl)
			if !ok {
				return nil
			}
			return repeatStep{o.Value("text").(*steps.Template), int(o.Int("times"))}
		}))
	compile := func(src string) (steps.Block, diag.List) {
		p, l := manifest.Parse(manifest.Files{
			"PLUGIN.md":       []byte("---\nid: case\nname: Case\ndescription: A test case.\nversion: 1.0.0\n---\nI.\n"),
			"tools/tool.yaml": []byte("description: T.\neffect: read\nsteps:\n" + src + "title: T\n"),
		})
		require.False(t, l.HasErrors(), l.Error())
		lim := steps.DefaultLimits()
		tl := p.Tools[0]
		c := &steps.Compiler{Doc: tl.Doc, L: &l, Scope: steps.NewScope("input", "prefs"), Limits: &lim, Registry: r}
		return c.Block(tl.Steps, "steps"), l
	}
	b, l := compile("  - repeat: {text: ab, times: 3}\n")
	require.False(t, l.HasErrors(), l.Error())
	require.Len(t, b, 1)
	_, l = compile("  - repeat: {txt: ab, times: 10}\n    as: x\n  - repeat: {text: a, as: y}\n  - text: a\n")
	assert.Equal(t, `tools/tool.yaml:4:14: unknown key "txt" in repeat (did you mean "text"?)
tools/tool.yaml:4:30: times must be between 1 and 9
tools/tool.yaml:4:13: repeat needs "text"
tools/tool.yaml:6:23: unknown key "as" in repeat (as is a key of a step, not of repeat)
tools/tool.yaml:7:5: unknown key "text" in a step (text belongs under repeat)`, l.Error())
	assert.Contains(t, steps.Markdown(r), "| `times` | integer 1 to 9 | 2 | how often |")
	defs, err := steps.JSONSchema(r)
	require.NoError(t, err)
	assert.Contains(t, defs, "kind.repeat")
}
