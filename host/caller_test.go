package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStepsSeeTheActorAndTheTurn: steps read $actor (the reference's
// ctx.actor) and $turn (ctx.turn: sessionId, tainted, userAsked; null
// outside an agent's turn). The session id a plugin sees is its own hash
// of the host's: stable within a session, different for another plugin.
func TestStepsSeeTheActorAndTheTurn(t *testing.T) {
	h := host.New(host.Config{})
	reg := h.Registry()
	for _, id := range []string{"who", "other"} {
		p := parse(t, map[string]string{
			"PLUGIN.md":     "---\nid: " + id + "\nname: W\ndescription: d\nversion: 1.0.0\n---\nI.\n",
			"tools/me.yaml": "description: d\neffect: read\nsteps:\n  - return: '{actor: $actor, turn: $turn}'\n",
		})
		_, err := reg.AddDocument(p, registry.Official, registry.DocOptions{})
		require.NoError(t, err)
	}
	call := func(c registry.Call) map[string]any {
		t.Helper()
		env, err := reg.Invoke(context.Background(), c, nil)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(env.Data.(json.RawMessage), &out))
		return out
	}
	assert.Equal(t, map[string]any{"actor": "user", "turn": nil}, call(registry.Call{Tool: "who.me"}))
	assert.Equal(t, map[string]any{"actor": "scheduler", "turn": nil}, call(registry.Call{Tool: "who.me", Actor: registry.Scheduler}))
	a := call(registry.Call{Tool: "who.me", Actor: registry.Agent, Tainted: true, UserAsked: true, SessionID: "host-session-1"})
	assert.Equal(t, "agent", a["actor"])
	turn := a["turn"].(map[string]any)
	assert.Equal(t, true, turn["tainted"])
	assert.Equal(t, true, turn["userAsked"])
	sid := turn["sessionId"].(string)
	assert.NotEmpty(t, sid)
	assert.NotContains(t, sid, "host-session-1", "the host's own session id never reaches a plugin")
	again := call(registry.Call{Tool: "who.me", Actor: registry.Agent, SessionID: "host-session-1"})["turn"].(map[string]any)
	assert.Equal(t, sid, again["sessionId"], "stable within the session")
	assert.Equal(t, false, again["tainted"])
	other := call(registry.Call{Tool: "other.me", Actor: registry.Agent, SessionID: "host-session-1"})["turn"].(map[string]any)
	assert.NotEqual(t, sid, other["sessionId"], "another plugin sees another id")
}
