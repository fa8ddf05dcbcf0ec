package registry_test

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckRunExitCodes: each refusal kind with the exit code and message
// `harness run` gives it.
func TestCheckRunExitCodes(t *testing.T) {
	files := docFiles("doc", "defaultModes: { public: off }\n", map[string]string{
		"look":  toolYAML("read"),
		"save":  toolYAML("write"),
		"pay":   toolYAML("money"),
		"post":  toolYAML("public"),
		"mine":  toolYAML("read", "userOnly: true"),
		"check": toolYAML("read", "alwaysAsk: true"),
	})
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), l.Error())
	ctx := context.Background()
	cases := []struct {
		name    string
		rc      registry.RunCheck
		code    int
		reason  registry.Reason
		message string
	}{
		{"user read", registry.RunCheck{Tool: "look"}, 0, registry.ReasonAllowed, "may run"},
		{"user write of a community document", registry.RunCheck{Tool: "save"}, 0, registry.ReasonAllowed, "may run"},
		{"unknown tool", registry.RunCheck{Tool: "nope"}, 2, registry.ReasonUnknownTool, `there is no tool "nope"`},
		{"bad input", registry.RunCheck{Tool: "look", Input: map[string]any{"q": 1}}, 2, registry.ReasonBadInput, "at /q"},
		{"off", registry.RunCheck{Tool: "post", Actor: registry.Agent, Approve: true}, 3, registry.ReasonModeOff, "public tools of doc are off"},
		{"off does not stop the user", registry.RunCheck{Tool: "post"}, 0, registry.ReasonAllowed, "may run"},
		{"bad input on an off tool is bad input", registry.RunCheck{Tool: "post", Actor: registry.Agent, Input: map[string]any{"q": 1}}, 2, registry.ReasonBadInput, "at /q"},
		{"userOnly from the agent", registry.RunCheck{Tool: "mine", Actor: registry.Agent, Approve: true}, 3, registry.ReasonUserOnly, "for the user only"},
		{"userOnly from the scheduler", registry.RunCheck{Tool: "mine", Actor: registry.Scheduler}, 3, registry.ReasonUserOnly, "the scheduler may not call it"},
		{"scheduler and a write", registry.RunCheck{Tool: "save", Actor: registry.Scheduler, Approve: true}, 3, registry.ReasonSchedulerNotRead, "only read tools"},
		{"scheduler and an ask", registry.RunCheck{Tool: "check", Actor: registry.Scheduler, Approve: true}, 3, registry.ReasonSchedulerAsk, "cannot ask"},
		{"ask without --approve", registry.RunCheck{Tool: "pay", Actor: registry.Agent}, 3, registry.ReasonNoApprover, "pass --approve"},
		{"ask with --approve", registry.RunCheck{Tool: "pay", Actor: registry.Agent, Approve: true}, 0, registry.ReasonModeAsk, "ask the user first"},
		{"alwaysAsk without --approve", registry.RunCheck{Tool: "check", Actor: registry.Agent}, 3, registry.ReasonNoApprover, "asks the user before every call"},
		{"tainted write, official, auto", registry.RunCheck{Tool: "save", Actor: registry.Agent, Tainted: true, Trust: registry.Official,
			Store: autoWrites(t)}, 3, registry.ReasonNoApprover, "untrusted data"},
		{"clean write, official, auto", registry.RunCheck{Tool: "save", Actor: registry.Agent, Trust: registry.Official,
			Store: autoWrites(t)}, 0, registry.ReasonAllowed, "may run"},
		{"by model name", registry.RunCheck{Tool: "doc__look", Actor: registry.Agent}, 0, registry.ReasonAllowed, "may run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.rc.Plugin = p
			if c.rc.Trust == "" {
				c.rc.Trust = registry.Community
			}
			d := registry.CheckRun(ctx, c.rc)
			assert.Equal(t, c.code, d.ExitCode())
			assert.Equal(t, c.reason, d.Reason)
			assert.Contains(t, d.Message, c.message)
			assert.False(t, d.Ask, "CheckRun never leaves an ask")
			if c.code == 0 {
				assert.NoError(t, d.Err())
			} else {
				var re *registry.RefusedError
				require.ErrorAs(t, d.Err(), &re)
				assert.Equal(t, c.code, re.ExitCode())
			}
		})
	}
}

func autoWrites(t *testing.T) registry.Store {
	s := registry.NewMemoryStore()
	require.NoError(t, s.UpdateSettings("doc", func(ps *registry.PluginSettings) { ps.Modes[manifest.Write] = manifest.Auto }))
	return s
}
