package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStepsSeeHowTheUserAnswered: steps read $grant (the reference's
// ctx.grant): null when nobody was asked, "once" or "always" as the user
// answered the ask, and "always" when a standing grant let the call run.
// $grant cannot be bound with as.
func TestStepsSeeHowTheUserAnswered(t *testing.T) {
	h := host.New(host.Config{})
	reg := h.Registry()
	p := parse(t, map[string]string{
		"PLUGIN.md":       "---\nid: ans\nname: A\ndescription: d\nversion: 1.0.0\n---\nI.\n",
		"tools/send.yaml": "description: d\neffect: write\nsteps:\n  - return: '{grant: $grant}'\n",
	})
	_, err := reg.AddDocument(p, registry.Official, registry.DocOptions{})
	require.NoError(t, err)
	call := func(c registry.Call, ap registry.Approver) any {
		t.Helper()
		env, err := reg.Invoke(context.Background(), c, ap)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(env.Data.(json.RawMessage), &out))
		return out["grant"]
	}
	agent := registry.Call{Tool: "ans.send", Actor: registry.Agent}
	assert.Nil(t, call(registry.Call{Tool: "ans.send"}, nil), "the user's own call: nobody was asked")
	assert.Equal(t, "once", call(agent, registry.ApproveAll))
	assert.Equal(t, "always", call(agent, registry.ApproveAlways))
	assert.Equal(t, "always", call(agent, nil), "the standing grant")
	require.NoError(t, reg.SetMode("ans", manifest.Write, manifest.Auto))
	assert.Nil(t, call(agent, nil), "auto: nobody was asked")

	p2, l := manifest.Parse(manifest.Files{
		"PLUGIN.md":    []byte("---\nid: bind\nname: B\ndescription: d\nversion: 1.0.0\n---\nI.\n"),
		"tools/t.yaml": []byte("description: d\neffect: read\nsteps:\n  - jq: '1'\n    as: grant\n"),
	})
	require.False(t, l.HasErrors(), l.Err())
	_, dl := h.Load(p2)
	require.True(t, dl.HasErrors())
	assert.Contains(t, dl.Err().Error(), "$grant is reserved")
}
