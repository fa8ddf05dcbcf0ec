package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, files map[string]string) *manifest.Plugin {
	t.Helper()
	fs := manifest.Files{}
	for k, v := range files {
		fs[k] = []byte(v)
	}
	p, l := manifest.Parse(fs)
	require.False(t, l.HasErrors(), "%v", l.Err())
	return p
}

// A tool naming a campus service the host's catalogue lacks fails with
// the step's FILE:LINE:COL, before anything is sent; the document's other
// tools still run.
func TestUnknownServiceIsPositioned(t *testing.T) {
	p := parse(t, map[string]string{
		"PLUGIN.md":       "---\nid: lab\nname: L\ndescription: d\nversion: 1.0.0\nrequires: [campus-session]\naccess:\n  campus: [lab-booking]\n---\nI.\n",
		"tools/book.yaml": "description: d\neffect: read\nsteps:\n  - request: {service: lab-booking, path: /x}\n",
		"tools/ping.yaml": "description: d\neffect: read\nsteps:\n  - return: '\"pong\"'\n",
	})
	h := host.New(host.Config{})
	doc, l := h.Load(p)
	require.False(t, l.HasErrors(), "%v", l.Err())
	_, err := doc.Run(context.Background(), host.Call{Tool: "book"})
	var ue *host.UnknownServiceError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Equal(t, `tools/book.yaml:4:24: tool "book" calls campus service "lab-booking", which the service catalogue does not know`, err.Error())
	res, err := doc.Run(context.Background(), host.Call{Tool: "ping"})
	require.NoError(t, err)
	assert.Equal(t, `"pong"`, string(res.JSON))

	// With the service in the catalogue the tool is sent (and fails on
	// the closed port, not on the catalogue).
	h = host.New(host.Config{Catalogue: proxy.Catalogue{"lab-booking": {Name: "lab-booking", Origin: "http://127.0.0.1:1"}}})
	doc, _ = h.Load(p)
	_, err = doc.Run(context.Background(), host.Call{Tool: "book"})
	require.Error(t, err)
	assert.False(t, errors.As(err, &ue), "%v", err)
}

// Without a home folder a plugin's store lives in memory for the host's
// life, one per plugin and trust.
func TestStoreInMemoryWithoutHome(t *testing.T) {
	p := parse(t, map[string]string{
		"PLUGIN.md":        "---\nid: counter\nname: C\ndescription: d\nversion: 1.0.0\naccess:\n  abilities: [kv]\n---\nI.\n",
		"tools/count.yaml": "description: d\neffect: write\nsteps:\n  - kv_get: n\n  - jq: '(. // 0) + 1'\n    as: n\n  - kv_set: {key: n, value: '$n'}\n  - return: '$n'\n",
	})
	h := host.New(host.Config{})
	doc, l := h.Load(p)
	require.False(t, l.HasErrors(), "%v", l.Err())
	for _, want := range []string{"1", "2", "3"} {
		res, err := doc.Run(context.Background(), host.Call{Tool: "count", Trust: registry.Community})
		require.NoError(t, err)
		assert.Equal(t, want, string(res.JSON))
	}
	res, err := doc.Run(context.Background(), host.Call{Tool: "count", Trust: registry.Official})
	require.NoError(t, err)
	assert.Equal(t, "1", string(res.JSON), "an official document's store is not a community one's")
}

// A decision's input was validated by Decide: a Checked call is not
// validated again; an unchecked one is, once, by the run.
func TestInputValidatedOnce(t *testing.T) {
	p := parse(t, map[string]string{
		"PLUGIN.md":    "---\nid: echo\nname: E\ndescription: d\nversion: 1.0.0\n---\nI.\n",
		"tools/e.yaml": "description: d\neffect: read\ninput:\n  type: object\n  properties: {n: {type: integer}}\n  required: [n]\nsteps:\n  - return: '$input.n'\n",
	})
	h := host.New(host.Config{})
	doc, l := h.Load(p)
	require.False(t, l.HasErrors(), "%v", l.Err())
	_, err := doc.Run(context.Background(), host.Call{Tool: "e", Input: map[string]any{"n": "x"}})
	require.Error(t, err)
	assert.True(t, host.IsInputError(err), "%v", err)

	reg := h.Registry()
	_, err = reg.AddDocument(p, registry.Community, registry.DocOptions{})
	require.NoError(t, err)
	d := reg.Decide(registry.Call{Tool: "echo.e", Input: map[string]any{"n": 7}})
	require.True(t, d.Allow, d.Message)
	res, err := doc.Run(context.Background(), host.Call{Tool: "e", Input: d.Input, Checked: true})
	require.NoError(t, err)
	assert.Equal(t, "7", string(res.JSON))
	// Checked skips the schema: what Decide let through is not looked at again.
	res, err = doc.Run(context.Background(), host.Call{Tool: "e", Input: map[string]any{"n": "x"}, Checked: true})
	require.NoError(t, err)
	assert.Equal(t, `"x"`, string(res.JSON))
}

// TestModelCopyIsCutUsersIsNot: the harness cuts each result to 12,000
// characters for the model, while the UI keeps the full output (the
// reference). Through the registry the envelope's Data is the cut copy
// and Full the whole; Data is what the envelope's JSON carries.
func TestModelCopyIsCutUsersIsNot(t *testing.T) {
	p := parse(t, map[string]string{
		"PLUGIN.md":       "---\nid: big\nname: B\ndescription: d\nversion: 1.0.0\n---\nI.\n",
		"tools/list.yaml": "description: d\neffect: read\nsteps:\n  - return: '[range(3000) | {n: .}]'\n",
	})
	h := host.New(host.Config{})
	reg := h.Registry()
	_, err := reg.AddDocument(p, registry.Official, registry.DocOptions{})
	require.NoError(t, err)
	env, err := reg.Invoke(context.Background(), registry.Call{Tool: "big.list", Actor: registry.Agent}, nil)
	require.NoError(t, err)
	model, err := json.Marshal(env.Data)
	require.NoError(t, err)
	assert.LessOrEqual(t, len([]rune(string(model))), 12000)
	assert.Contains(t, string(model), `"truncated":true`)
	full, err := json.Marshal(env.Full)
	require.NoError(t, err)
	var whole []map[string]int
	require.NoError(t, json.Unmarshal(full, &whole))
	require.Len(t, whole, 3000)
	assert.Equal(t, 2999, whole[2999]["n"])
	out, err := json.Marshal(env)
	require.NoError(t, err)
	assert.NotContains(t, string(out), `{"n":2999}`, "the whole copy never reaches the agent")
}

// A preference value stored in the home folder before the document changed
// its kind (shuttle's route was an integer, now a choice of strings) is
// read as its text when that fits; one that fits in no way gives way to the
// default instead of failing the run.
func TestStoredPreferenceFollowsItsKind(t *testing.T) {
	p := parse(t, map[string]string{
		"PLUGIN.md": "---\nid: bus\nname: B\ndescription: d\nversion: 1.0.0\npreferences:\n" +
			"  route: {title: R, kind: choice, options: [{value: \"7\", label: Seven}, {value: \"4\", label: Four}], default: \"7\"}\n" +
			"  dark: {title: D, kind: boolean, default: false}\n---\nI.\n",
		"tools/show.yaml": "description: d\neffect: read\nsteps:\n  - return: '$prefs'\n",
	})
	home := t.TempDir()
	store := &registry.HomeStore{Dir: home}
	h := host.New(host.Config{Home: home})
	doc, l := h.Load(p)
	require.False(t, l.HasErrors(), "%v", l.Err())
	for stored, want := range map[string]string{
		`{"route": 4, "dark": true}`:   `{"dark":true,"route":"4"}`,
		`{"route": 9, "dark": "yes"}`:  `{"dark":false,"route":"7"}`,
		`{"route": "4", "dark": true}`: `{"dark":true,"route":"4"}`,
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(stored), &m))
		require.NoError(t, store.SetPrefs(registry.PrefsKey("bus", registry.Official), m))
		res, err := doc.Run(context.Background(), host.Call{Tool: "show", Trust: registry.Official})
		require.NoError(t, err, stored)
		assert.JSONEq(t, want, string(res.JSON), stored)
	}
}
