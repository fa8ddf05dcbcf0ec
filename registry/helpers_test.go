package registry_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/require"
)

// docFiles builds a document: front is extra front-matter YAML, tools maps
// a tool name to its YAML without steps (a return step is added).
func docFiles(id, front string, tools map[string]string) manifest.Files {
	fm := fmt.Sprintf("---\nid: %s\nname: %s plugin\ndescription: The %s test plugin.\nversion: 1.0.0\n%s---\nUse %s for tests.\n", id, id, id, front, id)
	f := manifest.Files{"PLUGIN.md": []byte(fm)}
	for name, y := range tools {
		f["tools/"+name+".yaml"] = []byte(y + "\nsteps:\n  - return: '$input'\n")
	}
	return f
}

// toolYAML is a tool with an effect, a description and one optional
// string input "q".
func toolYAML(effect string, extra ...string) string {
	return fmt.Sprintf("description: A %s tool.\neffect: %s\ninput:\n  type: object\n  properties:\n    q: { type: string, maxLength: 10 }\n  additionalProperties: false\n%s",
		effect, effect, strings.Join(extra, "\n"))
}

// effectTools is one tool per effect, named after it.
func effectTools(extra ...string) map[string]string {
	m := map[string]string{}
	for _, e := range manifest.Effects {
		m[string(e)] = toolYAML(string(e), extra...)
	}
	return m
}

// echo is a Runner that returns its input, or a fixed value when set.
func echoCompiler(p *manifest.Plugin) (registry.Runner, error) {
	return registry.RunnerFunc(func(ctx context.Context, req registry.RunRequest) (any, error) {
		return map[string]any{"plugin": req.Plugin, "tool": req.Tool, "input": req.Input, "prefs": req.Prefs}, nil
	}), nil
}

func mustAdd(t *testing.T, r *registry.Registry, files manifest.Files, trust registry.Trust, o registry.DocOptions) *registry.Document {
	t.Helper()
	d, err := r.AddFiles(files, trust, o)
	require.NoError(t, err)
	return d
}

func keys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func bytesReader(b []byte) *strings.Reader { return strings.NewReader(string(b)) }
