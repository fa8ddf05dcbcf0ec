package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/internal/yamlx"
	"go.yaml.in/yaml/v3"
)

var kvGetSpec = Spec{
	Kind:    "kv_get",
	Summary: "Read a value from the plugin's private store (needs the kv ability); null when the key is absent.",
	Short:   "a template naming the key",
	Scalar:  TemplateType{Esc: Text},
	Example: `- kv_get: last-${ $input.building }`,
	Caps:    Caps{KV: true},
}

var kvSetSpec = Spec{
	Kind:    "kv_set",
	Summary: "Store a value in the plugin's private store (needs the kv ability); a null value deletes the key. Output: the value.",
	Decl: &yamlx.Decl{Name: "kv_set", Fields: []yamlx.Field{
		{Name: "key", Type: TemplateType{Esc: Text}, Required: true, Doc: fmt.Sprintf("the key (at most %d characters)", MaxKeyLen)},
		{Name: "value", Type: JQType, Default: ".", Doc: "the value to store"},
	}},
	Example: `- kv_set: { key: "last", value: '{at: 1}' }`,
	Caps:    Caps{KV: true},
}

func init() {
	builtin.mustRegister(kvGetSpec, decodeKVGet)
	builtin.mustRegister(kvSetSpec, decodeKVSet)
}

// MaxKeyLen bounds a store key.
const MaxKeyLen = 200

type kvGetStep struct{ key *Template }

type kvSetStep struct {
	key   *Template
	value *JQ
}

var decodeKVGetValue = scalar(&kvGetSpec, func(t *Template) Step { return &kvGetStep{t} })

func decodeKVGet(c *Compiler, n *yaml.Node) Step {
	c.Use(Use{Pos: c.Pos(n), Ability: "kv"})
	return decodeKVGetValue(c, n)
}

func decodeKVSet(c *Compiler, n *yaml.Node) Step {
	c.Use(Use{Pos: c.Pos(n), Ability: "kv"})
	m, ok := c.Decode(n, kvSetSpec.Decl)
	if !ok {
		return nil
	}
	s := &kvSetStep{key: m.Value("key").(*Template)}
	s.value, _ = m.Value("value").(*JQ) // nil: the default ., the step's input
	return s
}

var errNoKV = errors.New("this host gives the plugin no store (the kv ability)")

// renderKey renders a store step's key; without a store (the kv ability)
// there is none to render.
func renderKey(ctx context.Context, f *Frame, t *Template) (string, error) {
	if f.KV == nil {
		return "", errNoKV
	}
	k, err := t.Render(ctx, f, f.Dot)
	if err != nil {
		return "", err
	}
	if k == "" || len(k) > MaxKeyLen {
		return "", fmt.Errorf("a store key must have 1 to %d characters", MaxKeyLen)
	}
	return k, nil
}

func (s *kvGetStep) Run(ctx context.Context, f *Frame) (any, error) {
	k, err := renderKey(ctx, f, s.key)
	if err != nil {
		return nil, err
	}
	v, _, err := f.KV.Get(k)
	return v, err
}

func (s *kvSetStep) Run(ctx context.Context, f *Frame) (any, error) {
	k, err := renderKey(ctx, f, s.key)
	if err != nil {
		return nil, err
	}
	v := f.Dot
	if s.value != nil {
		if v, err = s.value.First(ctx, f, f.Dot); err != nil {
			return nil, err
		}
	}
	if err := f.CountKVWrite(); err != nil {
		return nil, err
	}
	if err := f.KV.Set(k, v); err != nil {
		return nil, err
	}
	return v, nil
}

var (
	_ Step = (*kvGetStep)(nil)
	_ Step = (*kvSetStep)(nil)
)
