package registry_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// grantRule is docs/permissions.md's standing-grant rule as data: an
// agent's mode_ask (row 5) becomes allow (`granted`) when the tool has a
// standing grant, its effect is not money, the trust's loosest mode for
// the effect is auto, and the turn is not tainted or the effect is read.
func grantRule(actor, effect, trust, tainted string, reason registry.Reason) bool {
	return reason == registry.ReasonModeAsk && actor == "agent" && effect != "money" &&
		loosest[trust][effect] == "auto" && (tainted == "no" || effect == "read")
}

// TestStandingGrantTable: every cell of the decision table again, with a
// standing grant stored for every tool (written straight to the store, as
// any file in the home may hold them). The grant turns exactly the cells
// grantRule names into runs; every other cell decides as without it: the
// scheduler, an off mode, a tainted turn's write, money, every community
// write, money and public tool and the user's calls are untouched.
func TestStandingGrantTable(t *testing.T) {
	store := registry.NewMemoryStore()
	r := registry.New(registry.WithStore(store))
	ids := map[string]string{}
	var grants []registry.Grant
	for _, m := range []string{"auto", "ask", "off"} {
		for _, tr := range []string{"official", "community"} {
			id := tr + "-" + m
			ids[tr+m] = id
			files := docFiles(id, "", effectTools())
			mustAdd(t, r, files, registry.Trust(tr), registry.DocOptions{})
			h, err := files.Hash()
			require.NoError(t, err)
			for _, e := range manifest.Effects {
				grants = append(grants, registry.Grant{Plugin: id, Tool: string(e), Effect: e, Trust: registry.Trust(tr), Hash: h, Granted: time.Now()})
			}
			require.NoError(t, store.UpdateSettings(id, func(ps *registry.PluginSettings) {
				for _, e := range manifest.Effects {
					ps.Modes[e] = manifest.Mode(m)
				}
			}))
		}
	}
	require.NoError(t, store.UpdateGrants(func([]registry.Grant) []registry.Grant { return grants }))
	cells, granted := 0, 0
	for _, actor := range []string{"user", "agent", "scheduler"} {
		for _, effect := range []string{"read", "write", "money", "public"} {
			for _, mode := range []string{"auto", "ask", "off"} {
				for _, trust := range []string{"official", "community"} {
					for _, tainted := range []string{"no", "yes"} {
						name := fmt.Sprintf("%s/%s/%s/%s/tainted=%s", actor, effect, mode, trust, tainted)
						wantOut, wantReason, _ := expected(actor, effect, mode, trust, tainted)
						wantGrant := registry.Answer("")
						if grantRule(actor, effect, trust, tainted, wantReason) {
							wantOut, wantReason, wantGrant = "allow", registry.ReasonGranted, registry.AnswerAlways
							granted++
						}
						d := r.Decide(registry.Call{Tool: ids[trust+mode] + "." + effect, Actor: registry.Actor(actor),
							Tainted: tainted == "yes", Input: map[string]any{"q": "x"}})
						assert.Equal(t, wantOut, outcome(d), name)
						assert.Equal(t, wantReason, d.Reason, name)
						assert.Equal(t, wantGrant, d.Grant, name)
						cells++
					}
				}
			}
		}
	}
	assert.Equal(t, 144, cells)
	// official read, write and public in a clean turn; official and
	// community read in a clean and in a tainted turn
	assert.Equal(t, 6, granted)
}

// TestAlwaysIsOfferedAndKeptOnlyWhereTheRulesAllow: an agent's ask offers
// always (ApprovalRequest.Always) only where a standing grant may be
// given; an always there is kept and the next call runs unasked, an
// always anywhere else is once and keeps nothing.
func TestAlwaysIsOfferedAndKeptOnlyWhereTheRulesAllow(t *testing.T) {
	tools := effectTools()
	tools["careful"] = toolYAML("write", "alwaysAsk: true")
	cases := []struct {
		trust   registry.Trust
		tool    string
		tainted bool
		offered bool
	}{
		{registry.Official, "read", false, true},
		{registry.Official, "write", false, true},
		{registry.Official, "public", false, true},
		{registry.Official, "money", false, false},   // money asks every time
		{registry.Official, "careful", false, false}, // alwaysAsk
		{registry.Official, "write", true, false},    // a tainted turn
		{registry.Official, "read", true, false},     // a tainted turn offers none either
		{registry.Community, "write", false, false},  // community write, money, public always ask
		{registry.Community, "public", false, false},
		{registry.Community, "money", false, false},
		{registry.Community, "read", false, true},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/%s/tainted=%v", c.trust, c.tool, c.tainted)
		store := registry.NewMemoryStore()
		r := registry.New(registry.WithStore(store), registry.WithCompiler(echoCompiler))
		mustAdd(t, r, docFiles("p", "", tools), c.trust, registry.DocOptions{})
		for _, e := range manifest.Effects {
			require.NoError(t, r.SetMode("p", e, manifest.Ask), name)
		}
		var offered []bool
		ap := registry.AnswerFunc(func(_ context.Context, req registry.ApprovalRequest) (registry.Answer, error) {
			offered = append(offered, req.Always)
			return registry.AnswerAlways, nil
		})
		call := registry.Call{Tool: "p." + c.tool, Actor: registry.Agent, Tainted: c.tainted}
		d := r.Authorize(context.Background(), call, ap)
		require.True(t, d.Allow, name)
		assert.Equal(t, []bool{c.offered}, offered, name)
		want := registry.AnswerOnce
		if c.offered {
			want = registry.AnswerAlways
		}
		assert.Equal(t, want, d.Grant, name)
		gs, err := store.Grants()
		require.NoError(t, err)
		assert.Equal(t, c.offered, len(gs) == 1, name)
		// the next call, with nobody to ask
		again := r.Decide(registry.Call{Tool: "p." + c.tool, Actor: registry.Agent})
		if c.offered {
			assert.True(t, again.Allow, name)
			assert.Equal(t, registry.ReasonGranted, again.Reason, name)
		} else {
			assert.True(t, again.Ask, name)
		}
	}
}

// TestOldApproversAnswerOnce: an Approver that answers only yes or no
// (ApproverFunc, ApproveAll) keeps working; its yes is once and keeps no
// grant; an Answerer's unknown answer is a no.
func TestOldApproversAnswerOnce(t *testing.T) {
	store := registry.NewMemoryStore()
	r := registry.New(registry.WithStore(store), registry.WithCompiler(echoCompiler))
	mustAdd(t, r, docFiles("p", "", effectTools()), registry.Official, registry.DocOptions{})
	call := registry.Call{Tool: "p.write", Actor: registry.Agent}
	d := r.Authorize(context.Background(), call, registry.ApproveAll)
	require.True(t, d.Allow)
	assert.Equal(t, registry.AnswerOnce, d.Grant)
	d = r.Authorize(context.Background(), call, registry.ApproverFunc(func(context.Context, registry.ApprovalRequest) (bool, error) { return false, nil }))
	assert.Equal(t, registry.ReasonDeclined, d.Reason)
	d = r.Authorize(context.Background(), call, registry.AnswerFunc(func(context.Context, registry.ApprovalRequest) (registry.Answer, error) {
		return "yes please", nil
	}))
	assert.Equal(t, registry.ReasonDeclined, d.Reason)
	gs, err := store.Grants()
	require.NoError(t, err)
	assert.Empty(t, gs)
	assert.True(t, r.Decide(call).Ask)
	// AnswerFunc is an Approver for code that calls Approve
	yes, err := registry.ApproveAlways.Approve(context.Background(), registry.ApprovalRequest{})
	require.NoError(t, err)
	assert.True(t, yes)
}

// TestGrantFollowsTheTool: a grant is bound to the document's content,
// trust and the tool's effect: another content (an update), another
// trust of the same id, or a stored effect that is not the tool's asks
// again. Revoke takes it back; the scheduler never runs on it.
func TestGrantFollowsTheTool(t *testing.T) {
	store := registry.NewMemoryStore()
	open := func(files manifest.Files, trust registry.Trust) *registry.Registry {
		r := registry.New(registry.WithStore(store), registry.WithCompiler(echoCompiler))
		mustAdd(t, r, files, trust, registry.DocOptions{})
		return r
	}
	v1 := docFiles("p", "", map[string]string{"send": toolYAML("write")})
	r := open(v1, registry.Official)
	call := registry.Call{Tool: "p.send", Actor: registry.Agent}
	require.True(t, r.Authorize(context.Background(), call, registry.ApproveAlways).Allow)
	assert.Equal(t, registry.ReasonGranted, open(v1, registry.Official).Decide(call).Reason)
	assert.Equal(t, registry.ReasonSchedulerNotRead, open(v1, registry.Official).Decide(registry.Call{Tool: "p.send", Actor: registry.Scheduler}).Reason)

	v2 := docFiles("p", "", map[string]string{"send": toolYAML("write", "title: Send it")})
	d := open(v2, registry.Official).Decide(call)
	assert.True(t, d.Ask, "changed content asks again")
	assert.Equal(t, registry.ReasonModeAsk, d.Reason)
	assert.True(t, open(v1, registry.Community).Decide(call).Ask, "another trust asks again")

	gs, err := open(v2, registry.Official).Grants("p")
	require.NoError(t, err)
	require.Len(t, gs, 1)
	assert.False(t, gs[0].Applies)
	assert.Contains(t, gs[0].Why, "changed")

	// the same grant claiming another effect does not apply
	require.NoError(t, store.UpdateGrants(func(l []registry.Grant) []registry.Grant {
		l[0].Effect = manifest.Read
		return l
	}))
	assert.True(t, open(v1, registry.Official).Decide(call).Ask)

	r = open(v1, registry.Official)
	require.True(t, r.Authorize(context.Background(), call, registry.ApproveAlways).Allow)
	assert.True(t, r.Decide(call).Allow)
	n, err := r.Revoke("p", "send")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.True(t, r.Decide(call).Ask, "revoked: asks again")
	n, err = r.Revoke("p", "")
	require.NoError(t, err)
	assert.Equal(t, 0, n)
}

// TestHostileGrantsFileGrantsNothing: grants.json in the home is read
// with bounds; a file that does not parse or is too large grants nothing
// (the call asks), entries that are not well formed are dropped, a grant
// the rules refuse (a community write) grants nothing, and the next write
// replaces a damaged file. Removing the plugin (ForgetData) deletes its
// grants.
func TestHostileGrantsFileGrantsNothing(t *testing.T) {
	dir := t.TempDir()
	home := &registry.HomeStore{Dir: dir}
	files := docFiles("p", "", map[string]string{"send": toolYAML("write")})
	h, err := files.Hash()
	require.NoError(t, err)
	open := func(trust registry.Trust) *registry.Registry {
		r := registry.New(registry.WithStore(home), registry.WithCompiler(echoCompiler))
		mustAdd(t, r, files, trust, registry.DocOptions{})
		return r
	}
	call := registry.Call{Tool: "p.send", Actor: registry.Agent}
	path := filepath.Join(dir, registry.GrantsFile)
	write := func(s string) { require.NoError(t, os.WriteFile(path, []byte(s), 0o600)) }
	good := fmt.Sprintf(`{"plugin":"p","tool":"send","effect":"write","trust":"official","hash":%q,"granted":"2026-01-01T00:00:00Z"}`, h)

	write(`{"grants": [` + good + `]}`)
	assert.True(t, open(registry.Official).Decide(call).Allow, "the well-formed grant applies")

	write(`{"grants": [` + good + `,`) // cut short
	assert.True(t, open(registry.Official).Decide(call).Ask)
	write(`{"grants": [` + good + `]}` + strings.Repeat(" ", 1<<20))
	assert.True(t, open(registry.Official).Decide(call).Ask, "an oversized file grants nothing")
	_, err = home.Grants()
	assert.Error(t, err)

	bad := strings.NewReplacer(`"plugin":"p"`, `"plugin":"../p"`).Replace(good)
	noHash := strings.NewReplacer(h, "").Replace(good)
	badEffect := strings.NewReplacer(`"effect":"write"`, `"effect":"everything"`).Replace(good)
	write(`{"grants": [` + bad + `,` + noHash + `,` + badEffect + `]}`)
	gs, err := home.Grants()
	require.NoError(t, err)
	assert.Empty(t, gs)
	assert.True(t, open(registry.Official).Decide(call).Ask)

	// a community document's write asks whatever the file says
	write(`{"grants": [` + strings.Replace(good, `"trust":"official"`, `"trust":"community"`, 1) + `]}`)
	d := open(registry.Community).Decide(call)
	assert.True(t, d.Ask)
	assert.False(t, d.Always)

	// a damaged file is replaced by the next grant
	write(`not json`)
	r := open(registry.Official)
	require.True(t, r.Authorize(context.Background(), call, registry.ApproveAlways).Allow)
	assert.Equal(t, registry.ReasonGranted, open(registry.Official).Decide(call).Reason)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	f, err := registry.ForgetData(dir, "p", false)
	require.NoError(t, err)
	assert.True(t, f.Grants)
	assert.Contains(t, f.What(), "grants")
	assert.True(t, open(registry.Official).Decide(call).Ask, "a removed plugin's grants go with it")
}

// TestMCPOffersAlways: over MCP the approval question offers once or
// always (a string field "grant" with those two values) where a standing
// grant may be given; the client's always is kept and the tool's next
// call runs without a question. Where none may be given the question has
// no such field and an always from the client is once.
func TestMCPOffersAlways(t *testing.T) {
	store := registry.NewMemoryStore()
	r := registry.New(registry.WithStore(store), registry.WithCompiler(echoCompiler))
	mustAdd(t, r, docFiles("off", "", map[string]string{"write": toolYAML("write")}), registry.Official, registry.DocOptions{})
	mustAdd(t, r, docFiles("com", "", map[string]string{"write": toolYAML("write")}), registry.Community, registry.DocOptions{})
	var schemas []map[string]any
	cs := connect(t, r, registry.MCPOptions{}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			s, _ := req.Params.RequestedSchema.(map[string]any)
			schemas = append(schemas, s)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"grant": "always"}}, nil
		},
	})
	ctx := context.Background()
	callOK := func(name string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"q": "x"}})
		require.NoError(t, err)
		require.False(t, res.IsError, text(t, res))
	}
	callOK("off__write")
	require.Len(t, schemas, 1)
	props := schemas[0]["properties"].(map[string]any)
	require.Contains(t, props, "grant")
	assert.Equal(t, []any{"once", "always"}, props["grant"].(map[string]any)["enum"])
	callOK("off__write")
	assert.Len(t, schemas, 1, "the standing grant runs the second call without a question")

	callOK("com__write")
	require.Len(t, schemas, 2)
	assert.NotContains(t, schemas[1]["properties"], "grant", "a community write offers no always")
	callOK("com__write")
	assert.Len(t, schemas, 3, "and the client's always was once")
	gs, err := store.Grants()
	require.NoError(t, err)
	require.Len(t, gs, 1)
	assert.Equal(t, "off", gs[0].Plugin)
}

// TestMCPApprovalIsBoundToTheContent: the signed state of an approval
// binds the document's content too: a yes (here an always) to the
// question about one version, sent back after the server reloaded another,
// is declined and keeps no grant.
func TestMCPApprovalIsBoundToTheContent(t *testing.T) {
	store := registry.NewMemoryStore()
	build := func(title string) *registry.Registry {
		r := registry.New(registry.WithStore(store), registry.WithCompiler(echoCompiler))
		mustAdd(t, r, docFiles("off", "", map[string]string{"write": toolYAML("write", "title: "+title)}), registry.Official, registry.DocOptions{})
		return r
	}
	svc, err := build("First").MCPService(registry.MCPOptions{})
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := svc.Server().Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	args := map[string]any{"q": "a"}
	always := mcp.InputResponseMap{"approve": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"grant": "always"}}}

	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "off__write", Arguments: args})
	require.NoError(t, err)
	require.NotEmpty(t, first.RequestState)
	require.NoError(t, svc.Refresh(build("Second")))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "off__write", Arguments: args, InputResponses: always, RequestState: first.RequestState})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), "declined")
	gs, err := store.Grants()
	require.NoError(t, err)
	assert.Empty(t, gs)

	// the question about the version served now is answered as asked
	again, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "off__write", Arguments: args})
	require.NoError(t, err)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "off__write", Arguments: args, InputResponses: always, RequestState: again.RequestState})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
	gs, err = store.Grants()
	require.NoError(t, err)
	assert.Len(t, gs, 1)
}

// TestGrantsOfALegacyID: a grant kept under an old plugin id never
// carries over to the document that lists the id as legacy (the grant was
// for another document's content), and the old id still lists and
// revokes it.
func TestGrantsOfALegacyID(t *testing.T) {
	store := registry.NewMemoryStore()
	r := registry.New(registry.WithStore(store), registry.WithCompiler(echoCompiler))
	files := docFiles("cafe", "legacy: { ids: [old-cafe] }\n", map[string]string{"send": toolYAML("write")})
	mustAdd(t, r, files, registry.Official, registry.DocOptions{})
	h, err := files.Hash()
	require.NoError(t, err)
	require.NoError(t, store.UpdateGrants(func([]registry.Grant) []registry.Grant {
		return []registry.Grant{{Plugin: "old-cafe", Tool: "send", Effect: manifest.Write, Trust: registry.Official, Hash: h, Granted: time.Now()}}
	}))
	assert.True(t, r.Decide(registry.Call{Tool: "old-cafe.send", Actor: registry.Agent}).Ask, "no carry-over, even by the old id")
	gs, err := r.Grants("old-cafe")
	require.NoError(t, err)
	require.Len(t, gs, 1)
	assert.False(t, gs[0].Applies)
	n, err := r.Revoke("old-cafe", "send")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}
