package registry_test

import (
	"fmt"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The written rules of docs/permissions.md, kept here as data: the bounds
// per trust and the decision rows, first match wins. The expectations of
// the full table come from these, not from the code under test.

// loosest[trust][effect]: the loosest mode a user may choose.
var loosest = map[string]map[string]string{
	"official":  {"read": "auto", "write": "auto", "money": "auto", "public": "auto"},
	"community": {"read": "auto", "write": "ask", "money": "ask", "public": "ask"},
}

var modeRank = map[string]int{"auto": 0, "ask": 1, "off": 2}

type row struct {
	actor, effect, mode, tainted string // "*" any; "!read" any effect but read
	outcome                      string // allow | ask | refuse
	reason                       registry.Reason
}

var rules = []row{
	{"user", "*", "*", "*", "allow", registry.ReasonAllowed},
	{"scheduler", "!read", "*", "*", "refuse", registry.ReasonSchedulerNotRead},
	{"*", "*", "off", "*", "refuse", registry.ReasonModeOff},
	{"scheduler", "*", "ask", "*", "refuse", registry.ReasonSchedulerAsk},
	{"agent", "*", "ask", "*", "ask", registry.ReasonModeAsk},
	{"agent", "!read", "*", "yes", "ask", registry.ReasonTainted},
	{"*", "*", "*", "*", "allow", registry.ReasonAllowed},
}

func match(pat, v string) bool {
	switch {
	case pat == "*":
		return true
	case pat[0] == '!':
		return v != pat[1:]
	}
	return pat == v
}

func expected(actor, effect, mode, trust, tainted string) (string, registry.Reason, string) {
	eff := mode
	if modeRank[loosest[trust][effect]] > modeRank[mode] {
		eff = loosest[trust][effect]
	}
	for _, r := range rules {
		if match(r.actor, actor) && match(r.effect, effect) && match(r.mode, eff) && match(r.tainted, tainted) {
			return r.outcome, r.reason, eff
		}
	}
	panic("no rule matched")
}

func outcome(d registry.Decision) string {
	switch {
	case d.Allow:
		return "allow"
	case d.Ask:
		return "ask"
	}
	return "refuse"
}

// TestDecisionTable covers every cell of actor x effect x mode x trust x
// tainted: 3 x 4 x 3 x 2 x 2 = 144 decisions.
func TestDecisionTable(t *testing.T) {
	store := registry.NewMemoryStore()
	r := registry.New(registry.WithStore(store))
	ids := map[string]string{}
	for _, m := range []string{"auto", "ask", "off"} {
		for _, tr := range []string{"official", "community"} {
			id := tr + "-" + m
			ids[tr+m] = id
			mustAdd(t, r, docFiles(id, "", effectTools()), registry.Trust(tr), registry.DocOptions{})
			// the stored choice, written straight to the store as a user
			// (or an older release) may have left it, even beyond the bounds
			require.NoError(t, store.UpdateSettings(id, func(ps *registry.PluginSettings) {
				for _, e := range manifest.Effects {
					ps.Modes[e] = manifest.Mode(m)
				}
			}))
		}
	}
	cells := 0
	for _, actor := range []string{"user", "agent", "scheduler"} {
		for _, effect := range []string{"read", "write", "money", "public"} {
			for _, mode := range []string{"auto", "ask", "off"} {
				for _, trust := range []string{"official", "community"} {
					for _, tainted := range []string{"no", "yes"} {
						name := fmt.Sprintf("%s/%s/%s/%s/tainted=%s", actor, effect, mode, trust, tainted)
						wantOut, wantReason, wantMode := expected(actor, effect, mode, trust, tainted)
						d := r.Decide(registry.Call{Tool: ids[trust+mode] + "." + effect, Actor: registry.Actor(actor),
							Tainted: tainted == "yes", Input: map[string]any{"q": "x"}})
						assert.Equal(t, wantOut, outcome(d), name)
						assert.Equal(t, wantReason, d.Reason, name)
						assert.Equal(t, manifest.Mode(wantMode), d.Mode, name)
						assert.NotEmpty(t, d.Message, name)
						cells++
					}
				}
			}
		}
	}
	assert.Equal(t, 144, cells)
}

func TestDefaultModes(t *testing.T) {
	r := registry.New()
	mustAdd(t, r, docFiles("com", "", effectTools()), registry.Community, registry.DocOptions{})
	mustAdd(t, r, docFiles("off", "", effectTools()), registry.Official, registry.DocOptions{})
	// a document's own defaults: official ones apply, community ones only
	// where stricter
	dm := "defaultModes: { read: ask, write: auto, money: auto, public: off }\n"
	mustAdd(t, r, docFiles("com-dm", dm, effectTools()), registry.Community, registry.DocOptions{})
	mustAdd(t, r, docFiles("off-dm", dm, effectTools()), registry.Official, registry.DocOptions{})
	want := map[string][4]manifest.Mode{
		"com":    {manifest.Auto, manifest.Ask, manifest.Ask, manifest.Ask},
		"off":    {manifest.Auto, manifest.Ask, manifest.Ask, manifest.Ask},
		"com-dm": {manifest.Ask, manifest.Ask, manifest.Ask, manifest.Off},
		"off-dm": {manifest.Ask, manifest.Auto, manifest.Auto, manifest.Off},
	}
	for id, modes := range want {
		for i, e := range manifest.Effects {
			m, err := r.Mode(id, e)
			require.NoError(t, err)
			assert.Equal(t, modes[i], m, "%s %s", id, e)
		}
	}
}

func TestSetModeBounds(t *testing.T) {
	r := registry.New()
	mustAdd(t, r, docFiles("com", "", effectTools()), registry.Community, registry.DocOptions{})
	mustAdd(t, r, docFiles("off", "", effectTools()), registry.Official, registry.DocOptions{})
	for _, e := range manifest.Effects {
		for _, m := range registry.Modes {
			wantErr := modeRank[string(m)] < modeRank[loosest["community"][string(e)]]
			err := r.SetMode("com", e, m)
			if wantErr {
				require.Error(t, err, "%s %s", e, m)
				assert.Contains(t, err.Error(), "cannot be auto")
			} else {
				require.NoError(t, err, "%s %s", e, m)
				got, _ := r.Mode("com", e)
				assert.Equal(t, m, got)
			}
			require.NoError(t, r.SetMode("off", e, m))
			got, _ := r.Mode("off", e)
			assert.Equal(t, m, got)
		}
	}
	require.Error(t, r.SetMode("com", "steal", manifest.Auto))
	require.Error(t, r.SetMode("com", manifest.Read, "maybe"))
	require.Error(t, r.SetMode("nope", manifest.Read, manifest.Auto))
	// back to the default
	require.NoError(t, r.SetMode("com", manifest.Write, ""))
	got, _ := r.Mode("com", manifest.Write)
	assert.Equal(t, manifest.Ask, got)
}

// TestDecideOrder checks the checks before and after the table: the tool,
// its availability and enabled flag, userOnly, alwaysAsk and the input,
// each with its own reason, in order.
func TestDecideOrder(t *testing.T) {
	r := registry.New(registry.WithCapabilities("campus-session"))
	mustAdd(t, r, docFiles("plain", "", map[string]string{
		"look":  toolYAML("read"),
		"mine":  toolYAML("read", "userOnly: true"),
		"check": toolYAML("read", "alwaysAsk: true"),
		"pay":   toolYAML("money", "alwaysAsk: true"),
	}), registry.Official, registry.DocOptions{})
	mustAdd(t, r, docFiles("gps", "requires: [location]\n", map[string]string{"where": toolYAML("read")}), registry.Official, registry.DocOptions{})
	mustAdd(t, r, docFiles("core", "", map[string]string{"look": toolYAML("read")}), registry.Official, registry.DocOptions{Core: true})
	require.NoError(t, r.SetEnabled("plain", false))
	require.Error(t, r.SetEnabled("core", false))

	cases := []struct {
		call   registry.Call
		out    string
		reason registry.Reason
	}{
		{registry.Call{Tool: "nope.look"}, "refuse", registry.ReasonUnknownTool},
		{registry.Call{Tool: "plain.nope"}, "refuse", registry.ReasonUnknownTool},
		{registry.Call{Tool: "gps.where"}, "refuse", registry.ReasonUnavailable},
		{registry.Call{Tool: "plain.look"}, "refuse", registry.ReasonDisabled},
		{registry.Call{Tool: "core__look", Actor: registry.Agent}, "allow", registry.ReasonAllowed},
		{registry.Call{Tool: "core.look", Input: map[string]any{"q": 5}}, "refuse", registry.ReasonBadInput},
		{registry.Call{Tool: "core.look", Input: map[string]any{"zz": "x"}}, "refuse", registry.ReasonBadInput},
	}
	for _, c := range cases {
		d := r.Decide(c.call)
		assert.Equal(t, c.out, outcome(d), "%+v", c.call)
		assert.Equal(t, c.reason, d.Reason, "%+v: %s", c.call, d.Message)
	}
	d := r.Decide(registry.Call{Tool: "core.look", Input: map[string]any{"q": 5}})
	assert.Contains(t, d.Message, "/q")
	assert.Equal(t, 2, d.ExitCode())
	assert.Equal(t, 2, r.Decide(registry.Call{Tool: "x.y"}).ExitCode())
	assert.Equal(t, 3, r.Decide(registry.Call{Tool: "gps.where"}).ExitCode())

	require.NoError(t, r.SetEnabled("plain", true))
	cases = []struct {
		call   registry.Call
		out    string
		reason registry.Reason
	}{
		{registry.Call{Tool: "plain.mine", Actor: registry.User}, "allow", registry.ReasonAllowed},
		{registry.Call{Tool: "plain.mine", Actor: registry.Agent}, "refuse", registry.ReasonUserOnly},
		{registry.Call{Tool: "plain.mine", Actor: registry.Scheduler}, "refuse", registry.ReasonUserOnly},
		{registry.Call{Tool: "plain.check", Actor: registry.Agent}, "ask", registry.ReasonAlwaysAsk},
		{registry.Call{Tool: "plain.check", Actor: registry.User}, "allow", registry.ReasonAllowed},
		{registry.Call{Tool: "plain.check", Actor: registry.Scheduler}, "refuse", registry.ReasonSchedulerAsk},
		{registry.Call{Tool: "plain.pay", Actor: registry.Scheduler}, "refuse", registry.ReasonSchedulerNotRead},
		// the input is checked before anybody is asked
		{registry.Call{Tool: "plain.check", Actor: registry.Agent, Input: map[string]any{"q": "far too long!"}}, "refuse", registry.ReasonBadInput},
	}
	for _, c := range cases {
		d := r.Decide(c.call)
		assert.Equal(t, c.out, outcome(d), "%+v", c.call)
		assert.Equal(t, c.reason, d.Reason, "%+v: %s", c.call, d.Message)
	}
	// alwaysAsk asks even when the mode is auto, but off still refuses
	require.NoError(t, r.SetMode("plain", manifest.Money, manifest.Auto))
	assert.Equal(t, registry.ReasonAlwaysAsk, r.Decide(registry.Call{Tool: "plain.pay", Actor: registry.Agent}).Reason)
	require.NoError(t, r.SetMode("plain", manifest.Money, manifest.Off))
	assert.Equal(t, registry.ReasonModeOff, r.Decide(registry.Call{Tool: "plain.pay", Actor: registry.Agent}).Reason)
}
