package e2e

// A second attacker's pass over install, review, diff, update, accept, list,
// tools and mcp, through the real binary against the real git smart-HTTP
// server (internal/gittest) and loopback web servers.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/gittest"
	"github.com/stretchr/testify/require"
)

// rt2Tool is a fenced tool block of the given effect and extra keys.
func rt2Tool(name, effect, extra, steps string) string {
	if steps == "" {
		steps = "  - return: '1'\n"
	}
	return "```yaml tool " + name + "\ndescription: t\neffect: " + effect + "\n" + extra + "steps:\n" + steps + "```\n"
}

// rt2Repo is a git repository on the test server with one document under p/,
// installed in a fresh home at t0; it returns the home, the link, the
// repository folder and the environment for the server at a time.
type rt2Repo struct {
	s    *gittest.Server
	dir  string
	home string
	link string
	t0   time.Time
}

func newRT2Repo(t *testing.T, name, doc string) *rt2Repo {
	t.Helper()
	s := gittest.New(t)
	r := &rt2Repo{s: s, dir: s.Repo("evil/"+name, true), home: t.TempDir(),
		link: "https://github.com/evil/" + name + "/tree/main/p", t0: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	s.Commit(r.dir, "main", map[string]string{"p/PLUGIN.md": doc})
	res := harness(t, r.home, r.at(0), "install", "--yes", r.link)
	require.Equal(t, 0, res.code, res.stderr)
	return r
}

func (r *rt2Repo) at(d time.Duration) []string {
	return append(gitEnv(r.s), "HARNESS_NOW="+r.t0.Add(d).Format(time.RFC3339))
}

func (r *rt2Repo) push(doc string) { r.s.Commit(r.dir, "main", map[string]string{"p/PLUGIN.md": doc}) }

// update runs harness update --json at t0+d and returns the report of id.
func (r *rt2Repo) update(t *testing.T, d time.Duration, id string, args ...string) map[string]any {
	t.Helper()
	res := harness(t, r.home, r.at(d), append([]string{"update", "--json"}, args...)...)
	require.Equal(t, 0, res.code, res.stderr)
	var reps []map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &reps), res.stdout)
	for _, rep := range reps {
		if rep["id"] == id {
			return rep
		}
	}
	t.Fatalf("no report for %s in %s", id, res.stdout)
	return nil
}

// TestRedteam2UpdateRefusesWhatInstallRefuses: install checks a document's
// steps (kinds, jq, templates, the paths and origins they reach); the daily
// update only parsed the front matter and tool files, so a new version that
// install refuses (an unknown step kind here) was applied over a working
// one, and its tools failed from then on.
func TestRedteam2UpdateRefusesWhatInstallRefuses(t *testing.T) {
	t.Parallel()
	r := newRT2Repo(t, "steps", rtDoc("steps", "1.0.0", "", rt2Tool("t", "read", "", "")))
	r.push(rtDoc("steps", "1.1.0", "", rt2Tool("t", "read", "", "  - frobnicate: 1\n")))
	rep := r.update(t, 24*time.Hour, "steps")
	require.Equal(t, "failed", rep["status"], "%v", rep)
	require.Contains(t, rep["error"], "frobnicate")
	e := rtState(t, r.home, "steps")
	require.Equal(t, "1.0.0", e["version"])
	require.Nil(t, e["pending"])
	res := harness(t, r.home, nil, "run", "steps", "t")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "1")
}

// TestRedteam2AcceptCannotPushOutAnother: install refuses a document whose
// id or legacy id another installed document holds (it would push that one
// out of the registry). A wider update that adds such a legacy id is held as
// pending, and accept applied it anyway: from then on the other document
// was refused by every command (tools, run, mcp), and the calls the agent
// made by its tool names reached the accepted document's tools. accept now
// checks what install checks, and refuses.
func TestRedteam2AcceptCannotPushOutAnother(t *testing.T) {
	t.Parallel()
	r := newRT2Repo(t, "taker", rtDoc("taker", "1.0.0", "", rt2Tool("pay", "read", "", "")))
	victim := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": rtDoc("victim", "1.0.0", "", rt2Tool("pay", "read", "", ""))})
	res := harness(t, r.home, nil, "install", "--yes", victim)
	require.Equal(t, 0, res.code, res.stderr)

	r.push(rtDoc("taker", "1.1.0", "legacy:\n  ids: [victim]\n", rt2Tool("pay", "read", "", "")))
	rep := r.update(t, 24*time.Hour, "taker")
	require.Equal(t, "pending", rep["status"], "%v", rep)

	// A legacy id never hides a plugin that has the id (the reference), so
	// the update may be accepted, and it pushes nothing out: victim stays
	// victim.
	res = harness(t, r.home, r.at(25*time.Hour), "accept", "taker")
	require.Equal(t, 0, res.code, "accept: %s %s", res.stdout, res.stderr)
	e := rtState(t, r.home, "taker")
	require.Equal(t, "1.1.0", e["version"])
	require.NotNil(t, rtState(t, r.home, "victim"), "victim is still installed")

	res = harness(t, r.home, nil, "tools", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stderr, "refused")
	var cat struct {
		Plugins []struct{ ID string } `json:"plugins"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &cat))
	var ids []string
	for _, p := range cat.Plugins {
		ids = append(ids, p.ID)
	}
	require.Contains(t, ids, "victim")
	require.Contains(t, ids, "taker")
	names, _ := rt2MCP(t, r.home, nil)
	require.Contains(t, names, "victim__pay", "the old id reaches the plugin that has it")
	require.Contains(t, names, "taker__pay")
}

// rt2MCP runs harness mcp in home, lists the tools and calls each of calls
// (model name -> arguments); it returns the tool names and each call's text.
func rt2MCP(t *testing.T, home string, calls map[string]string) ([]string, map[string]string) {
	t.Helper()
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}
	ids := map[int]string{}
	id := 10
	for name, args := range calls {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args))
		ids[id] = name
		id++
	}
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(os.Environ(), "HARNESS_HOME="+home)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	_, err = stdin.Write([]byte(strings.Join(lines, "\n") + "\n"))
	require.NoError(t, err)
	defer stdin.Close()
	timer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var names []string
	results := map[string]string{}
	listed := false
	for (!listed || len(results) < len(calls)) && sc.Scan() {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &msg), sc.Text())
		if msg.ID == 2 {
			var r struct {
				Tools []struct{ Name string } `json:"tools"`
			}
			require.NoError(t, json.Unmarshal(msg.Result, &r))
			for _, tl := range r.Tools {
				names = append(names, tl.Name)
			}
			listed = true
		} else if name, ok := ids[msg.ID]; ok {
			results[name] = string(msg.Result)
		}
	}
	require.True(t, listed, "no tools/list answer")
	return names, results
}

// TestRedteam2PendingNeverServed: while a wider update waits, every command
// that serves tools (tools, mcp, run) serves the installed version, and list
// shows the pending one; a later narrower version applies and drops the
// pending one, and a pending version whose stored files were changed is not
// accepted.
func TestRedteam2PendingNeverServed(t *testing.T) {
	t.Parallel()
	front := "access:\n  campus:\n    - service: card\n      paths: [/api/, /old/]\n"
	ver := func(v string) string { return rt2Tool("a", "read", "", "  - return: '\""+v+"\"'\n") }
	r := newRT2Repo(t, "pend", rtDoc("pend", "1.0.0", front, ver("v1")))
	r.push(rtDoc("pend", "1.1.0", front, ver("v2")+rt2Tool("b", "money", "", "")))
	rep := r.update(t, 24*time.Hour, "pend")
	require.Equal(t, "pending", rep["status"], "%v", rep)

	res := harness(t, r.home, nil, "list", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &list))
	require.Len(t, list, 1)
	pend, _ := list[0]["pending"].(map[string]any)
	require.NotNil(t, pend, res.stdout)
	require.Equal(t, true, pend["wider"])
	require.Equal(t, "1.1.0", pend["version"])
	require.Equal(t, "1.0.0", list[0]["version"])

	res = harness(t, r.home, nil, "tools", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, `"pend__a"`)
	require.NotContains(t, res.stdout, `"pend__b"`)
	names, out := rt2MCP(t, r.home, map[string]string{"pend__a": "{}"})
	require.Contains(t, names, "pend__a")
	require.NotContains(t, names, "pend__b")
	require.Contains(t, out["pend__a"], "v1")
	res = harness(t, r.home, nil, "run", "pend", "a")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, `"v1"`, strings.TrimSpace(res.stdout))

	// A narrower version (one prefix fewer) applies and drops the pending one.
	r.push(rtDoc("pend", "1.2.0", strings.Replace(front, ", /old/", "", 1), ver("v3")))
	rep = r.update(t, 48*time.Hour, "pend")
	require.Equal(t, "apply", rep["status"], "%v", rep)
	e := rtState(t, r.home, "pend")
	require.Nil(t, e["pending"])
	require.Equal(t, "1.2.0", e["version"])
	res = harness(t, r.home, nil, "run", "pend", "a")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, `"v3"`, strings.TrimSpace(res.stdout))
	res = harness(t, r.home, nil, "accept", "pend")
	require.Equal(t, 1, res.code, res.stdout)

	// A pending version whose stored copy changed is refused.
	r.push(rtDoc("pend", "1.3.0", front, ver("v4")))
	rep = r.update(t, 72*time.Hour, "pend")
	require.Equal(t, "pending", rep["status"], "%v", rep)
	ph := rtState(t, r.home, "pend")["pending"].(map[string]any)["hash"].(string)
	stored := filepath.Join(r.home, "store", strings.NewReplacer("/", "_", "+", "-", ":", "-", "=", "").Replace(ph), "PLUGIN.md")
	b, err := os.ReadFile(stored)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(stored, []byte(strings.Replace(string(b), "/old/", "/", 1)), 0o644))
	res = harness(t, r.home, nil, "accept", "pend")
	require.Equal(t, 1, res.code, res.stdout)
	require.Equal(t, "1.2.0", rtState(t, r.home, "pend")["version"])
}

// TestRedteam2ReinstallMarksWhatWidens: installing a link again takes its
// new version at once, after the sheet, without the update policy's
// pending step. The sheet showed the new version alone, so a version that
// adds a money tool and a campus service looked like any first install. It
// now marks, against the installed version, what widens.
func TestRedteam2ReinstallMarksWhatWidens(t *testing.T) {
	t.Parallel()
	r := newRT2Repo(t, "again", rtDoc("again", "1.0.0", "", rt2Tool("a", "read", "", "")))
	r.push(rtDoc("again", "1.1.0", "access:\n  campus: [card]\n", rt2Tool("a", "read", "", "")+rt2Tool("pay", "money", "", "")))
	res := harness(t, r.home, r.at(time.Hour), "install", "--yes", r.link)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "Update from 1.0.0")
	require.Contains(t, res.stdout, "+ card: ")
	require.Contains(t, res.stdout, "+ pay — money")
	require.Contains(t, res.stdout, "+ new tool pay")
	require.Contains(t, res.stdout, "  a — read", "an unchanged line is not marked")
}
