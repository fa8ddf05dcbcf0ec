package e2e

// The contract, line by line: the cases contract_test.go leaves out, driven
// through the built binary as the outside checks drive it.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/internal/gittest"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/dirhash"
)

// auditDoc is a PLUGIN.md with the given extra front matter.
func auditDoc(id, version, front string) string {
	return "---\nid: " + id + "\nname: 审计 " + id + "\ndescription: A document of the audit.\nversion: " + version + "\n" + front + "---\nUse the tools.\n"
}

// listIDs runs list --json and returns the installed ids, sorted.
func listIDs(t *testing.T, home string, env []string, args ...string) []string {
	t.Helper()
	r := harness(t, home, env, append([]string{"list", "--json"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
	ids := []string{}
	for _, e := range list {
		ids = append(ids, e["id"].(string))
	}
	sort.Strings(ids)
	return ids
}

// requireFailed checks a non-zero exit: nothing on stdout, a message on stderr.
func requireFailed(t *testing.T, r result, code int, what string) {
	t.Helper()
	require.Equal(t, code, r.code, "%s: stdout %q stderr %q", what, r.stdout, r.stderr)
	require.Empty(t, r.stdout, what)
	require.NotEmpty(t, strings.TrimSpace(r.stderr), "%s: a message says why", what)
	require.NotContains(t, r.stderr, "goroutine ", what)
	require.NotContains(t, r.stderr, "panic", what)
}

// --home wins over HARNESS_HOME in either position and spelling; without
// --home, HARNESS_HOME is the store.
func TestAuditHomePrecedence(t *testing.T) {
	t.Parallel()
	envHome, flagHome := t.TempDir(), t.TempDir()
	doc := skeleton(t)
	r := harness(t, envHome, nil, "install", doc, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	require.FileExists(t, filepath.Join(envHome, "state.json"), "HARNESS_HOME is the store")

	require.Equal(t, []string{"classrooms-example"}, listIDs(t, envHome, nil))
	require.Equal(t, []string{}, listIDs(t, envHome, nil, "--home", flagHome), "--home after the command")
	require.Equal(t, []string{}, listIDs(t, envHome, nil, "--home="+flagHome))
	r = harness(t, envHome, nil, "--home", flagHome, "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `[]`, r.stdout, "--home before the command")
	require.Equal(t, []string{"classrooms-example"}, listIDs(t, flagHome, nil, "--home", envHome))

	// install with --home stores there, not in HARNESS_HOME.
	r = harness(t, envHome, nil, "install", "--home", flagHome, doc, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	require.FileExists(t, filepath.Join(flagHome, "state.json"))
	require.Equal(t, []string{"classrooms-example"}, listIDs(t, flagHome, nil))
}

// copyCounting copies the files of src that count (no path component
// starting with ".") into a new folder.
func copyCounting(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel != "." && strings.HasPrefix(info.Name(), ".") {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if info.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFiles(t, dst, map[string]string{filepath.ToSlash(rel): string(b)})
		return nil
	})
	require.NoError(t, err)
	return dst
}

// hash is dirhash.HashDir over the files that count, for a folder, for a
// single PLUGIN.md, and for the same folder named with a relative path; the
// review sheet, the install and the list show the same hash.
func TestAuditHash(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md":             auditDoc("hashed", "1.0.0", "access:\n  web: [https://news.example.edu.cn]\n"),
		"tools/one.yaml":        "description: one\neffect: read\nsteps:\n  - return: '1'\n",
		"tools/two.yaml":        "description: two\neffect: read\nsteps:\n  - return: '2'\n",
		"widgets/card.json":     `{"type":"text","text":"hi"}`,
		"README.md":             "# notes\n",
		"LICENSE":               "MIT\n",
		"assets/My File.txt":    "a name with a space",
		"assets/图片.txt":         "a name in Chinese",
		"assets/deep/er/x.json": "{}",
		"tests/one.yaml":        "cases:\n  - name: one\n    tool: one\n    expect:\n      output: 1\n",
		".hidden":               "not counted",
		".github/workflow.yml":  "not counted either",
		"tools/.swap":           "nor this",
	})
	r := harness(t, home, nil, "lint", doc)
	require.Equal(t, 0, r.code, r.stderr)

	want, err := dirhash.HashDir(copyCounting(t, doc), "", dirhash.Hash1)
	require.NoError(t, err)
	got := harness(t, home, nil, "hash", doc)
	require.Equal(t, 0, got.code, got.stderr)
	require.Equal(t, want+"\n", got.stdout, "one line: the hash")
	withDots, err := dirhash.HashDir(doc, "", dirhash.Hash1)
	require.NoError(t, err)
	require.NotEqual(t, withDots, want, "the test's dot files would change the hash if they counted")

	// A relative path and a trailing slash name the same folder.
	r = harnessIn(t, filepath.Dir(doc), home, nil, "hash", filepath.Base(doc)+string(filepath.Separator))
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, want, strings.TrimSpace(r.stdout))

	// A single PLUGIN.md hashes as a folder holding only it.
	single := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": auditDoc("single", "1.0.0", "") + "\n```yaml tool t\ndescription: t\neffect: read\nsteps:\n  - return: '1'\n```\n"})
	wantSingle, err := dirhash.HashDir(single, "", dirhash.Hash1)
	require.NoError(t, err)
	writeFiles(t, single, map[string]string{"other.txt": "beside it, not part of the document"})
	r = harness(t, home, nil, "hash", filepath.Join(single, "PLUGIN.md"))
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, wantSingle, strings.TrimSpace(r.stdout))

	// review, install and list agree.
	r = harness(t, home, nil, "review", doc, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var sheet struct{ Hash string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sheet))
	require.Equal(t, want, sheet.Hash)
	r = harness(t, home, nil, "review", filepath.Join(single, "PLUGIN.md"), "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sheet))
	require.Equal(t, wantSingle, sheet.Hash)

	r = harness(t, home, nil, "install", doc, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	r = harness(t, home, nil, "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var list []struct{ ID, Hash string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Len(t, list, 1)
	require.Equal(t, want, list[0].Hash)
	r = harness(t, home, nil, "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, want, "list shows the hash")
	require.Contains(t, r.stdout, "community", "list shows the trust")
}

// harnessIn runs the binary with dir as its working folder.
func harnessIn(t *testing.T, dir, home string, env []string, args ...string) result {
	t.Helper()
	return invocation{dir: dir, home: home, env: env, args: args}.run(t)
}

// lint's FILE is relative to PATH however PATH is written (absolute,
// relative, with a trailing slash, a single PLUGIN.md), and every line has
// the FILE:LINE:COL: message shape.
func TestAuditLintFileNames(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	parent := t.TempDir()
	doc := writeFiles(t, filepath.Join(parent, "doc"), map[string]string{
		"PLUGIN.md":           auditDoc("linted", "1.0.0", "access:\n  web: [https://news.example.edu.cn]\n"),
		"tools/bad.yaml":      "description: bad\neffect: reed\nsteps:\n  - return: '1'\ntitle: Bad\n",
		"tools/nested/x.yaml": "not a tool: the folder is not read\n",
	})
	want := "tools/bad.yaml:2:9: "
	for _, tc := range []struct{ dir, path string }{
		{"", doc},
		{"", doc + string(filepath.Separator)},
		{parent, "doc"},
		{parent, "./doc/"},
		{doc, "."},
	} {
		r := harnessIn(t, orDir(tc.dir, parent), home, nil, "lint", tc.path)
		require.Equal(t, 1, r.code, "%s: %s", tc.path, r.stderr)
		require.Empty(t, r.stdout, tc.path)
		for _, ln := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			require.Regexp(t, diagLine, ln, tc.path)
		}
		require.True(t, strings.HasPrefix(r.stderr, want), "%s: %q", tc.path, r.stderr)
	}

	// A single PLUGIN.md: its own name, positions inside fenced blocks are
	// positions in the file.
	single := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": auditDoc("single", "1.0.0", "") +
		"\n```yaml tool t\ndescription: t\neffect: reed\nsteps:\n  - return: '1'\ntitle: T\n```\n"})
	for _, tc := range []struct{ dir, path string }{{"", filepath.Join(single, "PLUGIN.md")}, {single, "PLUGIN.md"}, {filepath.Dir(single), filepath.Join(filepath.Base(single), "PLUGIN.md")}} {
		r := harnessIn(t, orDir(tc.dir, parent), home, nil, "lint", tc.path)
		require.Equal(t, 1, r.code, "%s: %s", tc.path, r.stderr)
		require.True(t, strings.HasPrefix(r.stderr, "PLUGIN.md:11:9: "), "%s: %q", tc.path, r.stderr)
		require.Regexp(t, diagLine, strings.TrimSpace(r.stderr))
	}

	// A single file of another name is read as PLUGIN.md, and its problems
	// carry the name it was given.
	text, err := os.ReadFile(filepath.Join(single, "PLUGIN.md"))
	require.NoError(t, err)
	writeFiles(t, single, map[string]string{"canteen.md": string(text)})
	r := harnessIn(t, single, home, nil, "lint", "canteen.md")
	require.Equal(t, 1, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "canteen.md:11:9: "), r.stderr)
	h1 := harness(t, home, nil, "hash", filepath.Join(single, "canteen.md"))
	h2 := harness(t, home, nil, "hash", filepath.Join(single, "PLUGIN.md"))
	require.Equal(t, 0, h1.code, h1.stderr)
	require.Equal(t, h2.stdout, h1.stdout)

	// A missing path fails with a message, no crash.
	r = harness(t, home, nil, "lint", filepath.Join(parent, "nothing-here"))
	requireFailed(t, r, 1, "lint of a missing path")
}

func orDir(dir, def string) string {
	if dir == "" {
		return def
	}
	return dir
}

// A campus service the built-in catalogue does not know is at most a warning
// for lint, hash, review and diff (exit 0, for a folder and a single
// PLUGIN.md); run needs it in the catalogue or --services.
func TestAuditUnknownServiceIsAWarning(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	front := "requires: [campus-session]\naccess:\n  campus:\n    - mystery-office\n    - service: lab-booking\n      paths: [/api/]\n"
	tool := "description: t\neffect: read\nsteps:\n  - request: {service: mystery-office, path: /x}\n  - request: {service: lab-booking, path: '/api/rooms/${ 1 }'}\n  - return: '.status'\n"
	doc := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": auditDoc("unknown-svc", "1.0.0", front), "tools/t.yaml": tool})
	single := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": auditDoc("unknown-svc", "1.1.0", front) + "\n```yaml tool t\n" + tool + "```\n"})
	singleMD := filepath.Join(single, "PLUGIN.md")
	for _, path := range []string{doc, singleMD} {
		for _, args := range [][]string{{"lint", path}, {"hash", path}, {"review", path}, {"review", path, "--json"}} {
			r := harness(t, home, nil, args...)
			require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
			for _, ln := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
				if ln != "" && args[0] == "lint" {
					require.Regexp(t, diagLine, ln)
					require.Contains(t, ln, "warning", "only warnings: %s", ln)
				}
			}
		}
		r := harness(t, home, nil, "review", path, "--json")
		require.Contains(t, r.stdout, "mystery-office")
		require.Contains(t, r.stdout, "lab-booking")
	}
	r := harness(t, home, nil, "diff", doc, singleMD, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var d struct {
		Wider   *bool `json:"wider"`
		Changes []any `json:"changes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
	require.NotNil(t, d.Wider)
	require.False(t, *d.Wider, "the same access")
	r = harness(t, home, nil, "diff", skeleton(t), doc, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
	require.True(t, *d.Wider, "new campus services, known or not, widen")
	require.Contains(t, r.stdout, "mystery-office")
	r = harness(t, home, nil, "diff", skeleton(t), doc)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "mystery-office")

	// install and tools take it as well.
	r = harness(t, home, nil, "install", doc, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []string{"unknown-svc__t"}, toolNames(t, home, nil, "unknown-svc"))

	// run: unknown to the catalogue fails; --services makes it known.
	r = harness(t, home, nil, "run", doc, "t")
	requireFailed(t, r, 1, "run of a tool calling an unknown service")
	require.Regexp(t, `mystery-office|lab-booking`, r.stderr)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	services := filepath.Join(t.TempDir(), "services.yaml")
	require.NoError(t, os.WriteFile(services, []byte("mystery-office:\n  origin: "+srv.URL+"\nlab-booking:\n  origin: "+srv.URL+"\n"), 0o644))
	r = harness(t, home, nil, "run", doc, "t", "--services", services)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "202", strings.TrimSpace(r.stdout))
}

// counter is a loopback service that counts its requests and answers JSON.
type counter struct {
	srv *httptest.Server
	mu  sync.Mutex
	n   int
}

func newCounter(t *testing.T) *counter {
	c := &counter{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true,"path":"`+r.URL.Path+`"}`)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *counter) hits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// servicesFile writes a services file naming svc at origin.
func servicesFile(t *testing.T, svc, origin string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "services.yaml")
	require.NoError(t, os.WriteFile(p, []byte(svc+":\n  origin: "+origin+"\n"), 0o644))
	return p
}

// Every exit code of run in every case the contract lists, with nothing
// on stdout and a readable message on stderr whenever the code is not 0.
func TestAuditRunExitCodes(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	c := newCounter(t)
	services := servicesFile(t, "office", c.srv.URL)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close() // a loopback port nobody listens on any more
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md": auditDoc("exits", "1.0.0", "access:\n  campus: [office, gone]\n"),
		"tools/look.yaml": `description: reads
effect: read
input:
  type: object
  properties:
    n: {type: integer, minimum: 1}
    kind: {type: string, enum: [a, b]}
  required: [n]
  additionalProperties: false
steps:
  - request: {service: office, path: '/look/${ $input.n }'}
  - return: '.body'
`,
		"tools/write.yaml":   "description: writes\neffect: write\nsteps:\n  - request: {service: office, method: POST, path: /write, json: {a: 1}}\n  - return: '.body'\n",
		"tools/pay.yaml":     "description: pays\neffect: money\nsteps:\n  - request: {service: office, method: POST, path: /pay}\n  - return: '.body'\n",
		"tools/post.yaml":    "description: posts\neffect: public\nsteps:\n  - request: {service: office, method: POST, path: /post}\n  - return: '.body'\n",
		"tools/mine.yaml":    "description: mine\neffect: read\nuserOnly: true\nsteps:\n  - request: {service: office, path: /mine}\n  - return: '.body'\n",
		"tools/failing.yaml": "description: fails\neffect: read\nsteps:\n  - jq: '{room: \"101\"}'\n  - fail: 'Room ${ .room } is closed today'\n",
		"tools/jqerr.yaml":   "description: jq error\neffect: read\nsteps:\n  - jq: 'error(\"the office is closed\")'\n",
		"tools/down.yaml":    "description: unreachable\neffect: read\nsteps:\n  - request: {service: gone, path: /x}\n  - return: '.body'\n",
		"tools/verify.yaml":  "description: status\neffect: read\nsteps:\n  - status: {status: verification_required, methods: [sms], message: 'Enter the code we sent'}\n",
		"tools/text.yaml":    "description: a string\neffect: read\nsteps:\n  - return: '\"just text\"'\n",
	})
	svcBoth := filepath.Join(t.TempDir(), "services.yaml")
	require.NoError(t, os.WriteFile(svcBoth, []byte("office:\n  origin: "+c.srv.URL+"\ngone:\n  origin: "+closedURL+"\n"), 0o644))
	_ = services
	run := func(tool string, extra ...string) result {
		return harness(t, home, nil, append([]string{"run", doc, tool, "--services", svcBoth}, extra...)...)
	}

	// 0: a result, as one JSON value on stdout.
	for _, tc := range []struct {
		tool string
		args []string
		want string
	}{
		{"look", []string{"--input", `{"n": 3}`}, `{"ok":true,"path":"/look/3"}`},
		{"look", []string{"--input", `{"n": 3, "kind": "a"}`, "--actor", "agent", "--tainted"}, `{"ok":true,"path":"/look/3"}`},
		{"look", []string{"--input=" + `{"n":4}`, "--actor=scheduler"}, `{"ok":true,"path":"/look/4"}`},
		{"write", nil, `{"ok":true,"path":"/write"}`},
		{"write", []string{"--tainted"}, `{"ok":true,"path":"/write"}`},
		{"write", []string{"--actor", "agent", "--approve"}, `{"ok":true,"path":"/write"}`},
		{"pay", []string{"--actor", "agent", "--approve"}, `{"ok":true,"path":"/pay"}`},
		{"post", []string{"--actor", "agent", "--approve", "--tainted"}, `{"ok":true,"path":"/post"}`},
		{"mine", nil, `{"ok":true,"path":"/mine"}`},
		{"verify", []string{"--actor", "agent"}, `{"status":"verification_required","methods":["sms"],"message":"Enter the code we sent"}`},
		{"text", nil, `"just text"`},
	} {
		r := run(tc.tool, tc.args...)
		require.Equal(t, 0, r.code, "%s %v: %s", tc.tool, tc.args, r.stderr)
		require.JSONEq(t, tc.want, r.stdout, "%s %v", tc.tool, tc.args)
		require.Equal(t, 1, strings.Count(r.stdout, "\n"), "one line")
	}

	// 1: the tool failed; its message on stderr, nothing on stdout.
	for _, tc := range []struct{ tool, msg string }{
		{"failing", "Room 101 is closed today"},
		{"jqerr", "the office is closed"},
		{"down", "failed"},
	} {
		r := run(tc.tool)
		requireFailed(t, r, 1, tc.tool)
		require.Contains(t, r.stderr, tc.msg)
	}

	// 2: usage errors.
	for _, args := range [][]string{
		{"nosuchtool"},
		{"look", "--input", `{"n": 0}`},
		{"look", "--input", `{"n": "3"}`},
		{"look", "--input", `{"kind": "a"}`},
		{"look", "--input", `{"n": 3, "kind": "c"}`},
		{"look", "--input", `{"n": 3, "extra": true}`},
		{"look", "--input", `{"n": 3`},
		{"look", "--input", `{"n": 3} {}`},
		{"look", "--input", `[{"n": 3}]`},
		{"look", "--input", `"n"`},
		{"look", "--input", `null`},
		{"look", "--input", ``},
		{"look", "--input"},
		{"look", "--bogus"},
		{"look", "--actor", "admin", "--input", `{"n":3}`},
		{"look", "--trust", "verified", "--input", `{"n":3}`},
		{"look", "--resolve", "not-a-mapping", "--input", `{"n":3}`},
		{"look", "--approve=maybe", "--input", `{"n":3}`},
		{"look", "extra-argument", "--input", `{"n":3}`},
	} {
		r := run(args[0], args[1:]...)
		requireFailed(t, r, 2, strings.Join(args, " "))
	}
	r := harness(t, home, nil, "run", doc)
	requireFailed(t, r, 2, "run without TOOL")
	r = harness(t, home, nil, "run")
	requireFailed(t, r, 2, "run without arguments")
	r = run("look", "--input", `{"n": "3"}`)
	require.Contains(t, r.stderr, "n", "the message names the field")
	r = run("nosuchtool")
	require.Contains(t, r.stderr, "nosuchtool")

	// 3: refused by the permission rules, before any request.
	before := c.hits()
	for _, tc := range []struct {
		tool string
		args []string
	}{
		{"write", []string{"--actor", "agent"}},            // a community write asks
		{"pay", []string{"--actor", "agent", "--tainted"}}, // money asks
		{"post", []string{"--actor", "agent"}},             // public asks
		{"write", []string{"--actor", "scheduler"}},        // the scheduler reads only
		{"pay", []string{"--actor", "scheduler", "--approve"}},
		{"post", []string{"--actor", "scheduler", "--approve"}},
		{"mine", []string{"--actor", "agent"}},
		{"mine", []string{"--actor", "agent", "--approve"}}, // userOnly, whatever the answer
		{"mine", []string{"--actor", "scheduler"}},
		{"mine", []string{"--actor", "scheduler", "--approve"}},
	} {
		r := run(tc.tool, tc.args...)
		requireFailed(t, r, 3, tc.tool+" "+strings.Join(tc.args, " "))
	}
	require.Equal(t, before, c.hits(), "refused calls never reach the service")
	r = run("write", "--actor", "agent")
	require.Contains(t, r.stderr, "--approve", "an ask says how to answer it")
}

// Modes: an effect that is off refuses everyone (3), whether the document's
// defaults, the stored modes of an installed document or the settings of a
// bundled one turn it off; a tainted turn makes the agent's auto write ask.
func TestAuditRunModes(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	c := newCounter(t)
	services := servicesFile(t, "office", c.srv.URL)
	tools := map[string]string{
		"tools/look.yaml":  "description: reads\neffect: read\nsteps:\n  - request: {service: office, path: /look}\n  - return: '.body'\n",
		"tools/write.yaml": "description: writes\neffect: write\nsteps:\n  - request: {service: office, method: POST, path: /write}\n  - return: '.body'\n",
		"tools/post.yaml":  "description: posts\neffect: public\nsteps:\n  - request: {service: office, method: POST, path: /post}\n  - return: '.body'\n",
	}
	files := func(front string) map[string]string {
		m := map[string]string{"PLUGIN.md": auditDoc("modes", "1.0.0", "access:\n  campus: [office]\n"+front)}
		for k, v := range tools {
			m[k] = v
		}
		return m
	}
	// The document's own defaults: public off (a community document may be stricter).
	off := writeFiles(t, t.TempDir(), files("defaultModes: {public: off}\n"))
	// Off is about the agent and the scheduler: the user's own call runs.
	for _, args := range [][]string{{"--actor", "agent"}, {"--actor", "agent", "--approve"}, {"--actor", "scheduler", "--approve"},
		{"--actor", "agent", "--trust", "official", "--approve"}} {
		r := harness(t, home, nil, append([]string{"run", off, "post", "--services", services}, args...)...)
		requireFailed(t, r, 3, "public off "+strings.Join(args, " "))
	}
	for _, args := range [][]string{{}, {"--approve"}, {"--trust", "official"}} {
		r := harness(t, home, nil, append([]string{"run", off, "post", "--services", services}, args...)...)
		require.Equal(t, 0, r.code, "public off, the user's call %v: %s", args, r.stderr)
	}
	r := harness(t, home, nil, "run", off, "look", "--services", services)
	require.Equal(t, 0, r.code, r.stderr)

	// Official, write auto: the agent writes untainted; tainted it asks.
	auto := writeFiles(t, t.TempDir(), files("defaultModes: {write: auto}\n"))
	official := []string{"--trust", "official", "--services", services, "--actor", "agent"}
	r = harness(t, home, nil, append([]string{"run", auto, "write"}, official...)...)
	require.Equal(t, 0, r.code, r.stderr)
	r = harness(t, home, nil, append([]string{"run", auto, "write", "--tainted"}, official...)...)
	requireFailed(t, r, 3, "tainted write")
	r = harness(t, home, nil, append([]string{"run", auto, "write", "--tainted", "--approve"}, official...)...)
	require.Equal(t, 0, r.code, r.stderr)
	r = harness(t, home, nil, append([]string{"run", auto, "look", "--tainted"}, official...)...)
	require.Equal(t, 0, r.code, "a read never asks: %s", r.stderr)
	// Read on ask: the agent needs --approve, the scheduler is refused whatever it says.
	askRead := writeFiles(t, t.TempDir(), files("defaultModes: {read: ask}\n"))
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--actor", "user"}, 0},
		{[]string{"--actor", "agent"}, 3},
		{[]string{"--actor", "agent", "--approve"}, 0},
		{[]string{"--actor", "scheduler"}, 3},
		{[]string{"--actor", "scheduler", "--approve"}, 3},
	} {
		r = harness(t, home, nil, append([]string{"run", askRead, "look", "--trust", "official", "--services", services}, tc.args...)...)
		require.Equal(t, tc.code, r.code, "read on ask %v: %s", tc.args, r.stderr)
	}
	// The same document as community: its write: auto is ignored, the write asks.
	r = harness(t, home, nil, "run", auto, "write", "--services", services, "--actor", "agent")
	requireFailed(t, r, 3, "community write")

	// Stored modes of an installed document: read off.
	plain := writeFiles(t, t.TempDir(), files(""))
	r = harness(t, home, nil, "install", plain, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	r = harness(t, home, nil, "run", "modes", "look", "--services", services)
	require.Equal(t, 0, r.code, r.stderr)
	statePath := filepath.Join(home, "state.json")
	b, err := os.ReadFile(statePath)
	require.NoError(t, err)
	var state map[string]any
	require.NoError(t, json.Unmarshal(b, &state))
	entry := state["plugins"].(map[string]any)["modes"].(map[string]any)
	entry["modes"] = map[string]any{"read": "off"}
	b, err = json.Marshal(state)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(statePath, b, 0o644))
	before := c.hits()
	for _, actor := range []string{"agent", "scheduler"} {
		r = harness(t, home, nil, "run", "modes", "look", "--services", services, "--actor", actor, "--approve")
		requireFailed(t, r, 3, "installed, read off, "+actor)
	}
	require.Equal(t, before, c.hits())
	// and the user's own call runs: off is about the agent
	r = harness(t, home, nil, "run", "modes", "look", "--services", services)
	require.Equal(t, 0, r.code, "installed, read off, the user: %s", r.stderr)
	require.Greater(t, c.hits(), before)
	before = c.hits()
	// Disabled: refused too.
	entry["modes"] = map[string]any{}
	entry["enabled"] = false
	b, err = json.Marshal(state)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(statePath, b, 0o644))
	r = harness(t, home, nil, "run", "modes", "look", "--services", services)
	requireFailed(t, r, 3, "disabled")
	require.Equal(t, before, c.hits())

	// A bundled document's settings (permissions.json): read off.
	require.NoError(t, os.WriteFile(filepath.Join(home, "permissions.json"), []byte(`{"plugins": {"wallet": {"modes": {"read": "off"}}}}`), 0o644))
	// (card points at the loopback counter, so even a wrong answer sends nothing outside.)
	r = harness(t, home, nil, "run", "wallet", "cardBalance", "--services", servicesFile(t, "card", c.srv.URL), "--actor", "agent")
	requireFailed(t, r, 3, "bundled, read off")
	require.Equal(t, before, c.hits())
}

// seen is one request a test server received.
type seen struct {
	Method, Path, RawPath, Query, Body, ContentType, Accept, XTag string
}

// site is a loopback server for the skeleton's semantics: JSON, HTML and
// text answers, recording every request.
type site struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []seen
}

func newSite(t *testing.T) *site {
	s := &site{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.got = append(s.got, seen{r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery, string(b), r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.Header.Get("X-Requested-With")})
		s.mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/json"):
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Header().Set("X-Answer", "42")
			_, _ = io.WriteString(w, `{"rooms":[{"name":"101","capacity":120},{"name":"203","capacity":48}]}`)
		case strings.HasPrefix(r.URL.Path, "/html"):
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, `<html><body><ul>
<li class="notice"><a href="/n/1">  Exams  moved </a><span class="date">2026-12-01</span></li>
<li class="notice"><a href="/n/2">Library hours</a></li>
<li class="other"><a href="/n/3">Not a notice</a></li>
</ul></body></html>`)
		case strings.HasPrefix(r.URL.Path, "/text"):
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "closed: true")
		case strings.HasPrefix(r.URL.Path, "/empty"):
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *site) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.got...)
}

// The skeleton's step semantics, as the contract words them.
func TestAuditSkeletonSemantics(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := newSite(t)
	u, err := url.Parse(s.srv.URL)
	require.NoError(t, err)
	port := u.Port()
	web := "http://news.example.edu.cn:" + port
	resolve := []string{"--resolve", "news.example.edu.cn:" + port + ":127.0.0.1"}
	services := servicesFile(t, "portal", s.srv.URL)
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md": auditDoc("semantics", "1.0.0", "access:\n  campus:\n    - service: portal\n      paths: [/json/, /html/, /text/, /empty/]\n  web: ['"+web+"']\n"),
		// . is null first; each step's . is the previous output; as binds;
		// a skipped step passes . through; return ends the tool.
		"tools/flow.yaml": `description: flow
effect: read
input: {type: object, properties: {n: {type: integer}}, required: [n]}
steps:
  - jq: '{first: (. == null), n: $input.n}'
    as: a
  - if: 'false'
    jq: '"never"'
  - if: '.n > 100'
    request: {service: portal, path: /json/skipped}
  - jq: '. + {second: true}'
    as: b
  - if: '$input.n == 1'
    return: '{early: true, a: $a, dot: .}'
  - if: '$input.n == 2'
    fail: 'n is ${ $input.n }, first was ${ $a.first }, rooms ${ [1, 2] }'
  - jq: '[$a, $b, .]'
  - return: '{last: ., input: $input}'
  - request: {service: portal, path: /json/after-return}
`,
		"tools/shape.yaml": `description: request output
effect: read
input: {type: object, properties: {p: {type: string}}, required: [p]}
steps:
  - request: {service: portal, path: '/${ $input.p }/x'}
  - return: '{keys: keys, status: .status, bodyType: (.body | type), body: .body, answer: .headers["x-answer"], ctype: .headers["content-type"], url: .url}'
`,
		"tools/extract.yaml": `description: html
effect: read
steps:
  - request: {url: '` + web + `/html/list'}
    as: page
  - html:
      select: li.notice
      fields:
        title: a
        date: span.date
        link: {select: a, attr: href}
    as: rows
  - html: {from: $page.body, select: li a}
    as: texts
  - html: {from: '"<p>nothing</p>"', select: li}
    as: none
  - return: '{rows: $rows, texts: $texts, none: $none}'
`,
		"tools/escape.yaml": `description: escaping
effect: write
input: {type: object, properties: {v: {type: string}}, required: [v]}
steps:
  - request:
      service: portal
      method: POST
      path: '/json/${ $input.v }/end'
      query: {q: '${ $input.v }', fixed: a b}
      headers: {X-Requested-With: 'tag ${ $input.v }', Accept: application/json}
      form: {f: '${ $input.v }', n: '${ 1 + 1 }'}
  - request:
      url: '` + web + `/json/${ $input.v }/end?z=${ $input.v }'
      method: PUT
      json: {v: '${ $input.v }', n: '${ 1 + 1 }', s: 'x ${ 1 + 1 }', list: [1, '${ $input.v }']}
  - return: '.url'
`,
	})
	r := harness(t, home, nil, "lint", doc)
	require.Equal(t, 0, r.code, r.stderr)
	run := func(tool, input string) result {
		return harness(t, home, nil, append([]string{"run", doc, tool, "--services", services, "--input", input}, resolve...)...)
	}

	r = run("flow", `{"n": 1}`)
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"early": true, "a": {"first": true, "n": 1}, "dot": {"first": true, "n": 1, "second": true}}`, r.stdout)
	r = run("flow", `{"n": 2}`)
	requireFailed(t, r, 1, "fail")
	require.Contains(t, r.stderr, "n is 2, first was true, rooms [1,2]")
	r = run("flow", `{"n": 3}`)
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"last": [{"first": true, "n": 3}, {"first": true, "n": 3, "second": true}, {"first": true, "n": 3, "second": true}], "input": {"n": 3}}`, r.stdout)
	require.Empty(t, s.requests(), "a skipped request and a step after return send nothing")

	r = run("shape", `{"p": "json"}`)
	require.Equal(t, 0, r.code, r.stderr)
	var shape struct {
		Keys     []string
		Status   int
		BodyType string
		Body     any
		Answer   string
		Ctype    string
		URL      string
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &shape), r.stdout)
	require.Equal(t, []string{"body", "headers", "status", "url"}, shape.Keys)
	require.Equal(t, 200, shape.Status)
	require.Equal(t, "object", shape.BodyType)
	require.Equal(t, "42", shape.Answer)
	require.Contains(t, shape.Ctype, "application/json")
	require.Equal(t, s.srv.URL+"/json/x", shape.URL)
	for p, want := range map[string]string{"html": "string", "text": "string", "empty": "string"} {
		r = run("shape", `{"p": "`+p+`"}`)
		require.Equal(t, 0, r.code, r.stderr)
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &shape), r.stdout)
		require.Equal(t, want, shape.BodyType, p)
	}
	r = run("shape", `{"p": "text"}`)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &shape), r.stdout)
	require.Equal(t, "closed: true", shape.Body, "text stays text")

	r = run("extract", `{}`)
	require.Equal(t, 0, r.code, r.stderr)
	var ex struct {
		Rows  []map[string]any
		Texts []string
		None  []any
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ex), r.stdout)
	require.Len(t, ex.Rows, 2)
	require.Equal(t, "2026-12-01", ex.Rows[0]["date"])
	require.Equal(t, "/n/1", ex.Rows[0]["link"])
	require.Equal(t, "Library hours", ex.Rows[1]["title"])
	require.Contains(t, []any{nil, ""}, ex.Rows[1]["date"], "a field with no match")
	require.True(t, strings.HasPrefix(ex.Rows[0]["title"].(string), "Exams"), "trimmed: %q", ex.Rows[0]["title"])
	require.False(t, strings.HasSuffix(ex.Rows[0]["title"].(string), " "), "trimmed: %q", ex.Rows[0]["title"])
	require.Equal(t, []string{ex.Rows[0]["title"].(string), "Library hours", "Not a notice"}, ex.Texts)
	require.NotNil(t, ex.None, "no match is an empty list")
	require.Empty(t, ex.None)

	// ${ } in path and url: each value one segment; query, headers, form
	// and json carry it as data.
	for _, v := range []string{"x?y=1#frag", "@evil.example:80", "二教 101", "a&b=c", "semi;colon", "%41"} {
		before := len(s.requests())
		in, _ := json.Marshal(map[string]string{"v": v})
		r = run("escape", string(in))
		require.Equal(t, 0, r.code, "%q: %s", v, r.stderr)
		got := s.requests()[before:]
		require.Len(t, got, 2, v)
		for _, g := range got {
			require.Equal(t, "/json/"+v+"/end", g.Path, "%q reached %s", v, g.RawPath)
			require.Equal(t, 3, strings.Count(g.RawPath, "/"), "%q stays one segment: %s", v, g.RawPath)
		}
		q, err := url.ParseQuery(got[0].Query)
		require.NoError(t, err)
		require.Equal(t, v, q.Get("q"))
		require.Equal(t, "a b", q.Get("fixed"))
		require.Equal(t, "POST", got[0].Method)
		require.Equal(t, "tag "+v, got[0].XTag)
		require.Equal(t, "application/json", got[0].Accept)
		require.Contains(t, got[0].ContentType, "application/x-www-form-urlencoded")
		f, err := url.ParseQuery(got[0].Body)
		require.NoError(t, err)
		require.Equal(t, v, f.Get("f"))
		require.Equal(t, "2", f.Get("n"))
		q, err = url.ParseQuery(got[1].Query)
		require.NoError(t, err)
		require.Equal(t, v, q.Get("z"))
		require.Equal(t, "PUT", got[1].Method)
		require.Contains(t, got[1].ContentType, "application/json")
		var body map[string]any
		require.NoError(t, json.Unmarshal([]byte(got[1].Body), &body), got[1].Body)
		require.Equal(t, map[string]any{"v": v, "n": 2.0, "s": "x 2", "list": []any{1.0, v}}, body)
		var final string
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &final), r.stdout)
		fu, err := url.Parse(final)
		require.NoError(t, err)
		require.Equal(t, "news.example.edu.cn:"+port, fu.Host, "the host never changes")
	}
	// A value that would add or remove a segment is refused before it is sent.
	for _, v := range []string{"a/b", "../../admin", "..", ".", "%2e%2e", `\\host`, `a\b`, ""} {
		before := len(s.requests())
		in, _ := json.Marshal(map[string]string{"v": v})
		r = run("escape", string(in))
		requireFailed(t, r, 1, v)
		require.Len(t, s.requests(), before, "%q: nothing sent", v)
	}
}

const crowdTool = "description: How full the canteen is.\neffect: read\ninput: {type: object, properties: {hall: {type: string, description: the hall}}}\nsteps:\n  - return: '{hall: ($input.hall // \"学一\"), crowd: 0.5}'\n"

// fencedDoc is a whole plugin in one PLUGIN.md.
func fencedDoc(id, version, front string) string {
	return auditDoc(id, version, front) + "\n```yaml tool crowd\n" + crowdTool + "```\n"
}

// requireNothingStored checks the home holds no installed document.
func requireNothingStored(t *testing.T, home, what string) {
	t.Helper()
	require.Equal(t, []string{}, listIDs(t, home, nil), what)
	entries, _ := os.ReadDir(filepath.Join(home, "store"))
	require.Empty(t, entries, "%s: no stored files", what)
}

// toolNames runs tools --json and returns the model names of plugin id's tools.
func toolNames(t *testing.T, home string, env []string, id string) []string {
	t.Helper()
	r := harness(t, home, env, "tools", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var cat struct {
		Plugins []struct {
			ID    string
			Tools []struct{ Name string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &cat), r.stdout)
	names := []string{}
	for _, p := range cat.Plugins {
		if p.ID == id {
			for _, tl := range p.Tools {
				names = append(names, tl.Name)
			}
		}
	}
	return names
}

// Every link form of the contract: a GitHub folder (tree) link, a blob
// PLUGIN.md link, an http loopback PLUGIN.md URL, an https PLUGIN.md URL and
// a local path (folder and single file). Without --yes nothing is stored;
// with it the document is stored under the hash of what was fetched.
func TestAuditInstallLinkForms(t *testing.T) {
	t.Parallel()
	g := gittest.New(t)
	repo := g.Repo("alice/plugins", true)
	folderFiles := map[string]string{
		"canteen/PLUGIN.md":        auditDoc("canteen-x", "1.0.0", ""),
		"canteen/tools/crowd.yaml": crowdTool,
		"canteen/.github/ci.yml":   "not part of the document",
		"wallet/PLUGIN.md":         auditDoc("wallet-x", "1.0.0", ""),
		"wallet/tools/crowd.yaml":  crowdTool,
		"README.md":                "# plugins\n",
	}
	g.Commit(repo, "main", folderFiles)
	env := []string{"HARNESS_GIT_BASE=" + g.Base()}
	local := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": folderFiles["canteen/PLUGIN.md"], "tools/crowd.yaml": crowdTool})
	wantHash, err := dirhash.HashDir(local, "", dirhash.Hash1)
	require.NoError(t, err)

	urlDoc := fencedDoc("news-x", "1.0.0", "")
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/docs/PLUGIN.md" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		_, _ = io.WriteString(w, urlDoc)
	}))
	t.Cleanup(plain.Close)
	tlsDoc := fencedDoc("secure-x", "1.0.0", "")
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/a/b/PLUGIN.md" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, tlsDoc)
	}))
	t.Cleanup(secure.Close)
	// The binary trusts the test server's certificate through SSL_CERT_FILE.
	certFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw}), 0o644))
	tlsEnv := append([]string{"SSL_CERT_FILE=" + certFile}, env...)
	singleDir := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": fencedDoc("single-x", "1.0.0", "")})
	wantSingle, err := dirhash.HashDir(singleDir, "", dirhash.Hash1)
	require.NoError(t, err)

	for _, tc := range []struct {
		link, id string
		env      []string
		hash     string
		kind     string
	}{
		{"https://github.com/alice/plugins/tree/main/canteen", "canteen-x", env, wantHash, "github"},
		{"https://github.com/alice/plugins/blob/main/wallet/PLUGIN.md", "wallet-x", env, "", "github"},
		{plain.URL + "/docs/PLUGIN.md", "news-x", env, "", "url"},
		{strings.Replace(plain.URL, "127.0.0.1", "localhost", 1) + "/docs/PLUGIN.md", "news-x", env, "", "url"},
		{secure.URL + "/a/b/PLUGIN.md", "secure-x", tlsEnv, "", "url"},
		{local, "canteen-x", env, wantHash, "local"},
		{filepath.Join(singleDir, "PLUGIN.md"), "single-x", env, wantSingle, "local"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			r := harness(t, home, tc.env, "install", tc.link)
			require.Equal(t, 1, r.code, "%s without --yes: %s", tc.link, r.stderr)
			require.Contains(t, r.stdout+r.stderr, tc.id, "the review sheet is shown before the question")
			require.Contains(t, r.stderr, "--yes")
			requireNothingStored(t, home, tc.link)

			r = harness(t, home, tc.env, "install", tc.link, "--yes")
			require.Equal(t, 0, r.code, "%s: %s", tc.link, r.stderr)
			r = harness(t, home, tc.env, "list", "--json")
			require.Equal(t, 0, r.code, r.stderr)
			var list []struct{ ID, Hash, Trust, Kind, Link string }
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
			require.Len(t, list, 1)
			require.Equal(t, tc.id, list[0].ID)
			require.Equal(t, "community", list[0].Trust)
			require.Equal(t, tc.kind, list[0].Kind)
			if tc.hash != "" {
				require.Equal(t, tc.hash, list[0].Hash)
			}
			require.Equal(t, []string{tc.id + "__crowd"}, toolNames(t, home, tc.env, tc.id))
			r = harness(t, home, tc.env, "run", tc.id, "crowd", "--input", `{"hall":"农园"}`)
			require.Equal(t, 0, r.code, r.stderr)
			require.JSONEq(t, `{"hall":"农园","crowd":0.5}`, r.stdout)

			if tc.kind == "local" {
				// Installing the same link again changes nothing and succeeds.
				r = harness(t, home, tc.env, "install", tc.link, "--yes")
				require.Equal(t, 0, r.code, r.stderr)
				require.Equal(t, []string{tc.id}, listIDs(t, home, tc.env))
			}
		})
	}

	// Links that fail store nothing: a missing folder, a missing URL, an
	// invalid document, a blob link that does not name PLUGIN.md.
	home := t.TempDir()
	for _, link := range []string{
		"https://github.com/alice/plugins/tree/main/nothing",
		"https://github.com/alice/nosuchrepo/tree/main/canteen",
		"https://github.com/alice/plugins/blob/main/canteen/tools/crowd.yaml",
		plain.URL + "/missing/PLUGIN.md",
		plain.URL + "/docs/README.md",
		filepath.Join(t.TempDir(), "missing"),
	} {
		r := harness(t, home, env, "install", link, "--yes")
		requireFailed(t, r, 1, link)
		requireNothingStored(t, home, link)
	}
}

// Plain http is refused for any host that is not loopback, before any
// connection (the decision is the link parser's; no packet is sent).
func TestAuditPlainHTTPOnlyLoopback(t *testing.T) {
	t.Parallel()
	for _, link := range []string{"http://127.0.0.1:8080/PLUGIN.md", "http://localhost/x/PLUGIN.md", "http://[::1]:9/PLUGIN.md"} {
		_, err := fetch.ParseLink(link)
		require.NoError(t, err, link)
	}
	for _, link := range []string{"http://example.edu.cn/PLUGIN.md", "http://10.0.0.1/PLUGIN.md", "http://github.com/a/b/tree/main/x", "ftp://example.edu.cn/PLUGIN.md"} {
		_, err := fetch.ParseLink(link)
		require.Error(t, err, link)
		// The binary refuses it as well, naming the rule.
		home := t.TempDir()
		r := harness(t, home, nil, "install", link, "--yes")
		requireFailed(t, r, 1, link)
		requireNothingStored(t, home, link)
	}
}

// installedEntry is one entry of list --json.
type installedEntry struct {
	ID, Version, Hash, Link string
	Pending                 *struct {
		Version, Hash string
		Wider         bool
	}
}

func listEntries(t *testing.T, home string, env []string) map[string]installedEntry {
	t.Helper()
	r := harness(t, home, env, "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var list []installedEntry
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
	out := map[string]installedEntry{}
	for _, e := range list {
		out[e.ID] = e
	}
	return out
}

// update: at most once a day per link under HARNESS_NOW unless --force;
// same or narrower applies, wider waits for accept; --check changes nothing.
func TestAuditUpdateDaily(t *testing.T) {
	t.Parallel()
	g := gittest.New(t)
	repo := g.Repo("bob/docs", true)
	narrowFront := "access:\n  campus:\n    - service: card\n      paths: [/api/]\n"
	baseFront := narrowFront + "  abilities: [kv]\n"
	widerFront := narrowFront + "    - treehole\n  abilities: [kv]\n"
	commit := func(version, front string) {
		g.Commit(repo, "main", map[string]string{"lib/PLUGIN.md": auditDoc("lib", version, front), "lib/tools/crowd.yaml": crowdTool})
	}
	commit("1.0.0", baseFront)
	home := t.TempDir()
	link := "https://github.com/bob/docs/tree/main/lib"
	t0 := "2030-03-01T08:00:00Z"
	at := func(ts string) []string { return []string{"HARNESS_GIT_BASE=" + g.Base(), "HARNESS_NOW=" + ts} }

	r := harness(t, home, at(t0), "update")
	require.Equal(t, 0, r.code, "nothing installed: %s", r.stderr)
	r = harness(t, home, at(t0), "install", link, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	installed := listEntries(t, home, nil)["lib"]

	// Checked at install: an hour later it is not due, and nothing is asked.
	g.Reset()
	r = harness(t, home, at("2030-03-01T09:00:00Z"), "update")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "not due")
	require.Zero(t, g.Listings.Load()+g.Fetches.Load(), "no request to the git server")
	// --force checks now.
	r = harness(t, home, at("2030-03-01T09:00:00Z"), "update", "--force")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "unchanged")
	require.NotZero(t, g.Listings.Load())

	// A narrower version: not before a day has passed since the last check.
	commit("1.1.0", narrowFront)
	g.Reset()
	r = harness(t, home, at("2030-03-02T08:30:00Z"), "update")
	require.Equal(t, 0, r.code, r.stderr)
	require.Zero(t, g.Listings.Load(), "the forced check at 09:00 counts: %s", r.stdout)
	require.Equal(t, "1.0.0", listEntries(t, home, nil)["lib"].Version)
	r = harness(t, home, at("2030-03-02T09:00:00Z"), "update")
	require.Equal(t, 0, r.code, r.stderr)
	e := listEntries(t, home, nil)["lib"]
	require.Equal(t, "1.1.0", e.Version, "narrower applies at once: %s", r.stdout)
	require.Nil(t, e.Pending)
	require.NotEqual(t, installed.Hash, e.Hash)

	// A wider version: --check reports it and stores nothing.
	commit("1.2.0", widerFront)
	r = harness(t, home, at("2030-03-04T09:00:00Z"), "update", "--check")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "wider")
	require.Contains(t, r.stdout, "treehole")
	e = listEntries(t, home, nil)["lib"]
	require.Equal(t, "1.1.0", e.Version)
	require.Nil(t, e.Pending, "--check changes nothing")
	r = harness(t, home, nil, "accept", "lib")
	requireFailed(t, r, 1, "accept with nothing pending")

	// update holds it as pending; the installed version keeps working.
	r = harness(t, home, at("2030-03-04T09:00:00Z"), "update")
	require.Equal(t, 0, r.code, r.stderr)
	e = listEntries(t, home, nil)["lib"]
	require.Equal(t, "1.1.0", e.Version)
	require.NotNil(t, e.Pending)
	require.True(t, e.Pending.Wider)
	require.Equal(t, "1.2.0", e.Pending.Version)
	r = harness(t, home, nil, "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "pending")
	r = harness(t, home, nil, "run", "lib", "crowd")
	require.Equal(t, 0, r.code, r.stderr)

	r = harness(t, home, at("2030-03-04T10:00:00Z"), "accept", "lib")
	require.Equal(t, 0, r.code, r.stderr)
	e = listEntries(t, home, nil)["lib"]
	require.Equal(t, "1.2.0", e.Version)
	require.Nil(t, e.Pending)
	r = harness(t, home, at("2030-03-04T10:00:00Z"), "accept", "lib")
	requireFailed(t, r, 1, "accept twice")
	r = harness(t, home, nil, "accept", "not-installed")
	requireFailed(t, r, 1, "accept of an unknown id")

	// A bad HARNESS_NOW is a usage error, not a silent real clock.
	r = harness(t, home, []string{"HARNESS_NOW=tomorrow"}, "update")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "HARNESS_NOW")
}

// review and diff take links as well as paths: a GitHub folder, a blob
// PLUGIN.md link and a PLUGIN.md URL; diff --json has wider and changes.
func TestAuditReviewDiffLinks(t *testing.T) {
	t.Parallel()
	g := gittest.New(t)
	repo := g.Repo("carol/p", true)
	v1 := map[string]string{"doc/PLUGIN.md": auditDoc("doc", "1.0.0", "access:\n  web: [https://news.example.edu.cn]\n"), "doc/tools/crowd.yaml": crowdTool}
	g.Commit(repo, "v1", v1)
	g.Commit(repo, "main", map[string]string{"doc/PLUGIN.md": auditDoc("doc", "2.0.0", "access:\n  web: [https://news.example.edu.cn, https://forum.example.com]\n"), "doc/tools/crowd.yaml": crowdTool})
	env := []string{"HARNESS_GIT_BASE=" + g.Base()}
	home := t.TempDir()
	local := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": v1["doc/PLUGIN.md"], "tools/crowd.yaml": crowdTool})
	wantHash, err := dirhash.HashDir(local, "", dirhash.Hash1)
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, fencedDoc("doc", "3.0.0", "access:\n  web: [https://news.example.edu.cn]\n  abilities: [kv]\n"))
	}))
	t.Cleanup(srv.Close)
	urlLink := srv.URL + "/x/PLUGIN.md"

	for link, version := range map[string]string{
		"https://github.com/carol/p/tree/v1/doc":           "1.0.0",
		"https://github.com/carol/p/blob/v1/doc/PLUGIN.md": "1.0.0",
		"https://github.com/carol/p/tree/main/doc":         "2.0.0",
		urlLink: "3.0.0",
	} {
		r := harness(t, home, env, "review", link, "--json")
		require.Equal(t, 0, r.code, "%s: %s", link, r.stderr)
		var sheet struct{ ID, Version, Hash, Trust string }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &sheet), r.stdout)
		require.Equal(t, "doc", sheet.ID)
		require.Equal(t, version, sheet.Version, link)
		require.Equal(t, "community", sheet.Trust)
		require.True(t, strings.HasPrefix(sheet.Hash, "h1:"), sheet.Hash)
		if version == "1.0.0" {
			require.Equal(t, wantHash, sheet.Hash, "the hash of what was fetched")
		}
	}
	r := harness(t, home, env, "review", urlLink)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "crowd")
	require.Contains(t, r.stdout, urlLink)

	for _, tc := range []struct {
		old, new string
		wider    bool
	}{
		{"https://github.com/carol/p/tree/v1/doc", "https://github.com/carol/p/tree/main/doc", true},
		{"https://github.com/carol/p/tree/main/doc", "https://github.com/carol/p/blob/v1/doc/PLUGIN.md", false},
		{local, "https://github.com/carol/p/tree/main/doc", true},
		{"https://github.com/carol/p/tree/v1/doc", local, false},
		{local, urlLink, true},
	} {
		r := harness(t, home, env, "diff", tc.old, tc.new, "--json")
		require.Equal(t, 0, r.code, "%s → %s: %s", tc.old, tc.new, r.stderr)
		var d struct {
			Wider   *bool             `json:"wider"`
			Changes []json.RawMessage `json:"changes"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
		require.NotNil(t, d.Wider)
		require.NotNil(t, d.Changes)
		require.Equal(t, tc.wider, *d.Wider, "%s → %s: %s", tc.old, tc.new, r.stdout)
		if tc.wider {
			require.NotEmpty(t, d.Changes)
		}
	}
	r = harness(t, home, env, "diff", "https://github.com/carol/p/tree/v1/doc", "https://github.com/carol/p/tree/main/doc")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "forum.example.com")

	// A link that cannot be fetched: exit 1 with a message.
	r = harness(t, home, env, "review", "https://github.com/carol/p/tree/main/missing")
	requireFailed(t, r, 1, "review of a missing folder")
	r = harness(t, home, env, "diff", local, srv.URL+"/y/README.md", "--json")
	requireFailed(t, r, 1, "diff with a bad link")
}

// An installed document with the id of a bundled one takes its place (the
// contract knows no bundled documents: a user's canteen is theirs), with a
// warning; remove brings the bundled one back. install fails and stores
// nothing when the home could not load the document: a legacy id that a
// bundled or installed document holds, or an id another document claims as
// a legacy id. Before, install said "installed", and the document was then
// refused at every use while run ID ran the bundled one.
func TestAuditInstallIDClash(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	mine := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": auditDoc("canteen", "1.0.0", "") +
		"\n```yaml tool menu\ndescription: Today's menu.\neffect: read\nsteps:\n  - return: '[\"noodles\"]'\n```\n"})
	require.Equal(t, []string{"canteen__crowd"}, toolNames(t, home, nil, "canteen"), "the bundled canteen")
	r := harness(t, home, nil, "install", mine, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "warning")
	require.Contains(t, r.stderr, "bundled")
	require.Equal(t, []string{"canteen"}, listIDs(t, home, nil))
	r = harness(t, home, nil, "run", "canteen", "menu")
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `["noodles"]`, r.stdout)
	require.Equal(t, []string{"canteen__menu"}, toolNames(t, home, nil, "canteen"))
	r = harness(t, home, nil, "tools", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"trust": "community"`)
	r = harness(t, home, nil, "remove", "canteen")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []string{"canteen__crowd"}, toolNames(t, home, nil, "canteen"))

	// A legacy id never hides a plugin that has the id (the reference):
	// a document listing the bundled grades as a legacy id installs, and
	// grades is still the bundled grades.
	doc := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": fencedDoc("my-grades", "9.0.0", "legacy:\n  ids: [grades]\n")})
	r = harness(t, home, nil, "install", doc, "--yes")
	require.Equal(t, 0, r.code, "a bundled id as a legacy id: %s", r.stderr)
	require.NotEmpty(t, toolNames(t, home, nil, "grades"))
	require.NotContains(t, toolNames(t, home, nil, "grades"), "my-grades__read", "grades is not hidden")

	first := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": fencedDoc("notes-x", "1.0.0", "legacy:\n  ids: [old-notes]\n")})
	r = harness(t, home, nil, "install", first, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	for _, files := range []map[string]string{
		{"PLUGIN.md": fencedDoc("old-notes", "1.0.0", "")},
		{"PLUGIN.md": fencedDoc("aaa-notes", "1.0.0", "legacy:\n  ids: [notes-x]\n")},
	} {
		r = harness(t, home, nil, "install", writeFiles(t, t.TempDir(), files), "--yes")
		require.Equal(t, 0, r.code, "an id another lists as legacy, an installed id as a legacy id: both install: %s", r.stderr)
	}
	require.Equal(t, []string{"aaa-notes", "my-grades", "notes-x", "old-notes"}, listIDs(t, home, nil))
	// two documents listing one legacy id is still a clash
	r = harness(t, home, nil, "install", writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": fencedDoc("twin-notes", "1.0.0", "legacy:\n  ids: [old-notes]\n")}), "--yes")
	requireFailed(t, r, 1, "a legacy id another document lists")
	require.Contains(t, r.stderr, "nothing installed")
	require.Equal(t, []string{"aaa-notes", "my-grades", "notes-x", "old-notes"}, listIDs(t, home, nil), "twin-notes is not stored")
}

// The services and secrets files exactly as the contract shows them (and
// with only some of their keys): the proxy attaches the named cookies and
// headers, a redirect to the login path is a login_required result, and
// no secret reaches stdout, stderr, the trace or a file in the home.
func TestAuditServicesAndSecretsFiles(t *testing.T) {
	t.Parallel()
	const cookie, token = "s3cr3t-session-audit-41c2", "t0ken-audit-8d1e"
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("JSESSIONID")
		mu.Lock()
		got = append(got, r.URL.Path+" cookie="+func() string {
			if c == nil {
				return ""
			}
			return c.Value
		}()+" auth="+r.Header.Get("Authorization"))
		mu.Unlock()
		if c == nil || c.Value != cookie {
			http.Redirect(w, r, "/iaaa/login?from=card", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		// An echo of the credentials never reaches the steps.
		_, _ = io.WriteString(w, `{"balance": 12.5, "echo": "`+c.Value+` `+r.Header.Get("Authorization")+`"}`)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	services := write("services.yaml", `card:
  origin: `+srv.URL+`      # scheme://host[:port]
  auth:
    cookies: [JSESSIONID]             # cookie names the proxy attaches
    headers: [Authorization]          # header names the proxy attaches
  login:
    redirect: /iaaa/login             # a redirect whose path starts here means the session expired
`)
	secrets := write("secrets.yaml", `card:
  cookies: { JSESSIONID: "`+cookie+`" }
  headers: { Authorization: "Bearer `+token+`" }
`)
	cookiesOnlyServices := write("services-cookies.yaml", "card:\n  origin: "+srv.URL+"\n  auth:\n    cookies: [JSESSIONID]\n")
	cookiesOnlySecrets := write("secrets-cookies.yaml", "card:\n  cookies: { JSESSIONID: \""+cookie+"\" }\n")
	wrongSecrets := write("secrets-wrong.yaml", "card:\n  cookies: { JSESSIONID: \"an-expired-session\" }\n")
	home := t.TempDir()
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md":          auditDoc("balance", "1.0.0", "requires: [campus-session]\naccess:\n  campus:\n    - card\n  abilities: [kv]\n"),
		"tools/balance.yaml": "description: balance\neffect: read\nsteps:\n  - request: {service: card, path: /api/balance}\n    as: res\n  - kv_set: {key: last, value: '$res'}\n  - return: '{balance: .body.balance, echo: .body.echo, status: .status}'\n",
	})
	secretsIn := func(where, text string) {
		t.Helper()
		require.NotContains(t, text, cookie, where)
		require.NotContains(t, text, token, where)
	}

	for _, files := range [][2]string{{services, secrets}, {cookiesOnlyServices, cookiesOnlySecrets}, {services, cookiesOnlySecrets}} {
		r := harness(t, home, nil, "run", doc, "balance", "--services", files[0], "--secrets", files[1], "--trace")
		require.Equal(t, 0, r.code, r.stderr)
		var out struct {
			Balance float64
			Echo    string
			Status  int
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
		require.Equal(t, 12.5, out.Balance)
		require.Equal(t, 200, out.Status)
		secretsIn("stdout", r.stdout)
		secretsIn("stderr", r.stderr)
	}
	mu.Lock()
	require.Equal(t, "/api/balance cookie="+cookie+" auth=Bearer "+token, got[0], "both attached")
	require.Equal(t, "/api/balance cookie="+cookie+" auth=", got[1], "only the cookie")
	mu.Unlock()

	// An expired session: a status result, exit 0.
	r := harness(t, home, nil, "run", doc, "balance", "--services", services, "--secrets", wrongSecrets)
	require.Equal(t, 0, r.code, r.stderr)
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.Equal(t, "login_required", st["status"])
	require.Equal(t, "card", st["service"])

	// Nothing in the home holds a secret.
	err := filepath.Walk(home, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		secretsIn(p, string(b))
		return nil
	})
	require.NoError(t, err)

	// A services or secrets file of another shape is a usage error that
	// names the file, and shows no secret.
	for _, bad := range [][2]string{
		{write("svc-bad.yaml", "card:\n  origin: "+srv.URL+"\n  auth:\n    cookie: [JSESSIONID]\n"), secrets},
		{write("svc-noorigin.yaml", "card:\n  auth:\n    cookies: [JSESSIONID]\n"), secrets},
		{services, write("sec-bad.yaml", "card:\n  cookie: { JSESSIONID: \""+cookie+"\" }\n")},
		{services, filepath.Join(dir, "missing.yaml")},
	} {
		r := harness(t, home, nil, "run", doc, "balance", "--services", bad[0], "--secrets", bad[1])
		requireFailed(t, r, 2, "bad file "+bad[0]+" "+bad[1])
		require.Contains(t, r.stderr, ".yaml")
		secretsIn("stderr", r.stderr)
	}
}

// harness mcp on stdio, as a client starts it: the installed documents'
// tools by plugin__tool with their schemas, a call as the agent through the
// rules, and the envelope around the result.
func TestAuditMCPCalls(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	c := newCounter(t)
	services := servicesFile(t, "office", c.srv.URL)
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md":       auditDoc("mcpdoc", "1.0.0", "access:\n  campus: [office]\n"),
		"tools/look.yaml": "description: Looks a room up.\neffect: read\ninput: {type: object, properties: {room: {type: string}}, required: [room]}\nsteps:\n  - request: {service: office, path: '/rooms/${ $input.room }'}\n  - return: '.body'\n",
		"tools/book.yaml": "description: Books a room.\neffect: write\nsteps:\n  - request: {service: office, method: POST, path: /book}\n  - return: '.body'\n",
		"tools/mine.yaml": "description: Mine.\neffect: read\nuserOnly: true\nsteps:\n  - return: '1'\n",
	})
	r := harness(t, home, nil, "install", doc, "--yes")
	require.Equal(t, 0, r.code, r.stderr)

	cmd := exec.Command(bin, "--home", home, "mcp", "--services", services)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "audit", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	require.Contains(t, byName, "mcpdoc__look")
	require.Contains(t, byName, "mcpdoc__book")
	require.NotContains(t, byName, "mcpdoc__mine", "userOnly tools are hidden")
	require.Equal(t, "Looks a room up.", byName["mcpdoc__look"].Description)
	schema, err := json.Marshal(byName["mcpdoc__look"].InputSchema)
	require.NoError(t, err)
	require.JSONEq(t, `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"room": {"type": "string"}}, "required": ["room"]}`, string(schema))

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpdoc__look", Arguments: map[string]any{"room": "101"}})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	text := res.Content[0].(*mcp.TextContent).Text
	require.False(t, res.IsError, text)
	require.JSONEq(t, `{"source": {"plugin": "mcpdoc", "tool": "look", "trust": "community"}, "untrusted": true, "data": {"ok": true, "path": "/rooms/101"}}`, text)

	before := c.hits()
	for _, call := range []*mcp.CallToolParams{
		{Name: "mcpdoc__book", Arguments: map[string]any{}},   // a community write asks; this client cannot answer
		{Name: "mcpdoc__mine", Arguments: map[string]any{}},   // userOnly
		{Name: "mcpdoc__look", Arguments: map[string]any{}},   // input failing the schema
		{Name: "mcpdoc__nosuch", Arguments: map[string]any{}}, // unknown
	} {
		res, err := cs.CallTool(ctx, call)
		if err != nil {
			continue // a protocol error is a refusal too
		}
		require.True(t, res.IsError, call.Name)
		require.Contains(t, res.Content[0].(*mcp.TextContent).Text, "refused", call.Name)
	}
	require.Equal(t, before, c.hits(), "refused calls send nothing")
}

// skeletonCase is a passing case of the skeleton's free tool.
const skeletonCase = `secrets:
  portal:
    cookies: {JSESSIONID: fake-session-value}
cases:
  - name: two rooms
    tool: free
    input: {building: 二教}
    exchanges:
      - request:
          path: /api/classrooms/二教/free
          query: {lang: zh}
        response:
          json: {rooms: [{name: "101", capacity: 120}]}
    expect:
      output: {building: 二教, rooms: [{room: "101", seats: 120}]}
  - name: the portal is down
    tool: free
    input: {building: 二教}
    exchanges:
      - request:
          path: /api/classrooms/二教/free
          query: {lang: zh}
        response:
          status: 503
          body: down
    expect:
      error: The portal answered 503
`

// harness test: 0 when every case passes (a folder's tests/ and a single
// PLUGIN.md's fenced test blocks), 1 when one fails or cannot run.
func TestAuditTestCommand(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	doc := skeleton(t)
	writeFiles(t, doc, map[string]string{"tests/free.yaml": skeletonCase})
	r := harness(t, home, nil, "lint", doc)
	require.Equal(t, 0, r.code, r.stderr)
	r = harness(t, home, nil, "test", doc)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)

	plugin, err := os.ReadFile(filepath.Join(doc, "PLUGIN.md"))
	require.NoError(t, err)
	tool, err := os.ReadFile(filepath.Join(doc, "tools", "free.yaml"))
	require.NoError(t, err)
	single := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": string(plugin) + "\n```yaml tool free\n" + string(tool) + "```\n\n```yaml test free\n" + skeletonCase + "```\n"})
	r = harness(t, home, nil, "test", filepath.Join(single, "PLUGIN.md"))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)

	// One wrong expectation fails the run, and the report names the case.
	wrong := strings.Replace(skeletonCase, "seats: 120}", "seats: 121}", 1)
	writeFiles(t, doc, map[string]string{"tests/free.yaml": wrong})
	r = harness(t, home, nil, "test", doc)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout+r.stderr, "two rooms")
	// A test file that does not parse fails too.
	writeFiles(t, doc, map[string]string{"tests/free.yaml": "cases:\n  - name: x\n    tool: free\n    expekt: {}\n"})
	r = harness(t, home, nil, "test", doc)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Regexp(t, `tests/free.yaml:\d+:\d+: `, r.stdout+r.stderr)
}

// GitHub links whose REF has a slash, name a tag or a full commit, or whose
// document sits at the repository root.
func TestAuditGitHubLinkVariants(t *testing.T) {
	t.Parallel()
	g := gittest.New(t)
	root := g.Repo("dave/solo", true)
	g.Commit(root, "main", map[string]string{"PLUGIN.md": auditDoc("solo", "1.0.0", ""), "tools/crowd.yaml": crowdTool})
	nested := g.Repo("dave/many", true)
	c1 := g.Commit(nested, "feature/new-ui", map[string]string{"docs/x/PLUGIN.md": auditDoc("many-x", "0.9.0", ""), "docs/x/tools/crowd.yaml": crowdTool})
	g.Git(nested, nil, "tag", "v0.9", c1)
	g.Commit(nested, "main", map[string]string{"docs/x/PLUGIN.md": auditDoc("many-x", "1.0.0", ""), "docs/x/tools/crowd.yaml": crowdTool})
	env := []string{"HARNESS_GIT_BASE=" + g.Base()}
	for link, version := range map[string]string{
		"https://github.com/dave/solo":                                      "1.0.0",
		"https://github.com/dave/solo/tree/main":                            "1.0.0",
		"https://github.com/dave/solo/blob/main/PLUGIN.md":                  "1.0.0",
		"https://github.com/dave/many/tree/main/docs/x":                     "1.0.0",
		"https://github.com/dave/many/tree/feature/new-ui/docs/x":           "0.9.0",
		"https://github.com/dave/many/blob/feature/new-ui/docs/x/PLUGIN.md": "0.9.0",
		"https://github.com/dave/many/tree/v0.9/docs/x":                     "0.9.0",
		"https://github.com/dave/many/tree/" + c1 + "/docs/x":               "0.9.0",
	} {
		r := harness(t, t.TempDir(), env, "review", link, "--json")
		require.Equal(t, 0, r.code, "%s: %s", link, r.stderr)
		var sheet struct{ Version string }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &sheet))
		require.Equal(t, version, sheet.Version, link)
	}
	home := t.TempDir()
	r := harness(t, home, env, "install", "https://github.com/dave/many/tree/feature/new-ui/docs/x", "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	e := listEntries(t, home, nil)["many-x"]
	require.Equal(t, "0.9.0", e.Version)
}

// selfSigned makes a certificate for host and writes it as a PEM file the
// binary trusts through SSL_CERT_FILE.
func selfSigned(t *testing.T, host string) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: host},
		DNSNames:              []string{host},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, p
}

// --resolve maps a declared https origin (default port) to a loopback
// server, as curl's --resolve does, and the certificate is checked for the
// origin's name.
func TestAuditResolveHTTPSOrigin(t *testing.T) {
	t.Parallel()
	cert, caFile := selfSigned(t, "news.example.edu.cn")
	var hits int
	var mu sync.Mutex
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<ul><li class="notice"><a href="/n/9">Holiday</a><span class="date">2026-12-24</span></li></ul>`)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md": auditDoc("news", "1.0.0", "access:\n  web: [https://news.example.edu.cn]\n"),
		"tools/latest.yaml": `description: The newest notices.
effect: read
steps:
  - request: {url: "https://news.example.edu.cn/notices"}
  - html: {select: li.notice, fields: {title: a, date: span.date}}
`,
	})
	env := []string{"SSL_CERT_FILE=" + caFile}
	r := harness(t, t.TempDir(), env, "run", doc, "latest", "--resolve", "news.example.edu.cn:443:127.0.0.1:"+u.Port())
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `[{"title": "Holiday", "date": "2026-12-24"}]`, r.stdout)
	// Trusting only a certificate for another name, the same mapping fails.
	_, otherCA := selfSigned(t, "other.example")
	r = harness(t, t.TempDir(), []string{"SSL_CERT_FILE=" + otherCA}, "run", doc, "latest", "--resolve", "news.example.edu.cn:443:127.0.0.1:"+u.Port())
	requireFailed(t, r, 1, "a certificate the binary does not trust")
	mu.Lock()
	require.Equal(t, 1, hits, "the untrusted handshake never reached the handler")
	mu.Unlock()
}

// A stored copy whose files no longer match their hash is not run: run by
// id fails and names the quarantine, list says why, installing again
// repairs it.
func TestAuditTamperedStore(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	doc := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": fencedDoc("kept", "1.0.0", "")})
	r := harness(t, home, nil, "install", doc, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	stored, err := filepath.Glob(filepath.Join(home, "store", "*", "PLUGIN.md"))
	require.NoError(t, err)
	require.Len(t, stored, 1)
	require.NoError(t, os.Chmod(stored[0], 0o644))
	b, err := os.ReadFile(stored[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(stored[0], []byte(strings.Replace(string(b), `crowd: 0.5`, `crowd: 9.9`, 1)), 0o644))

	r = harness(t, home, nil, "run", "kept", "crowd")
	requireFailed(t, r, 1, "run of a tampered document")
	require.Contains(t, r.stderr, "quarantined")
	r = harness(t, home, nil, "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"problem"`)
	require.NotContains(t, toolNames(t, home, nil, "kept"), "kept__crowd")

	r = harness(t, home, nil, "install", doc, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	r = harness(t, home, nil, "run", "kept", "crowd")
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"hall": "学一", "crowd": 0.5}`, r.stdout)
}

// The contract's own example front matter (id canteen, the id of a bundled
// document too) with a tool of the skeleton's shape, installed from a local
// path and run by its id against the contract's services and secrets
// files: the user's canteen is the one that runs.
func TestAuditContractExampleByID(t *testing.T) {
	t.Parallel()
	const session, token = "s3cr3t-session", "Bearer t0ken"
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if c, err := r.Cookie("JSESSIONID"); err != nil || c.Value != session || r.Header.Get("Authorization") != token {
			http.Redirect(w, r, "/iaaa/login", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"halls":[{"name":"学一","people":120,"seats":400}]}`)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	services := filepath.Join(dir, "services.yaml")
	require.NoError(t, os.WriteFile(services, []byte(`card:
  origin: `+srv.URL+`      # scheme://host[:port]
  auth:
    cookies: [JSESSIONID]             # cookie names the proxy attaches
    headers: [Authorization]          # header names the proxy attaches
  login:
    redirect: /iaaa/login             # a redirect whose path starts here means the session expired
`), 0o644))
	secrets := filepath.Join(dir, "secrets.yaml")
	require.NoError(t, os.WriteFile(secrets, []byte(`card:
  cookies: { JSESSIONID: "s3cr3t-session" }
  headers: { Authorization: "Bearer t0ken" }
`), 0o600))
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md": `---
id: canteen                 # [a-z][a-z0-9-]*, at most 40 characters
name: 食堂
description: 食堂就餐人数与菜单。
version: 1.0.0
requires: [campus-session]
access:
  campus:                   # campus services by catalogue name
    - card                  #   any path of the service
    - service: grades       #   or narrowed to path prefixes
      paths: [/api/scores/]
  web:                      # public origins
    - https://news.example.edu.cn
  abilities: [kv]
---
Instructions for the agent, in Markdown.
`,
		"tools/halls.yaml": `title: 食堂人数
description: How many people are in each canteen now.
effect: read
untrusted: false
userOnly: false
input:
  type: object
  properties:
    hall: { type: string, description: "A hall, e.g. 学一" }
steps:
  - request:
      service: card
      method: GET
      path: /api/canteen/${ $input.hall // "all" }/crowd
      query: { lang: zh }
      headers: { Accept: application/json }
    as: res
  - if: .status != 200
    fail: "The card service answered ${ .status }"
  - jq: '[.body.halls[] | {hall: .name, people: .people, free: (.seats - .people)}]'
    as: halls
  - return: '{halls: $halls, asked: $input.hall}'
`,
	})
	home := t.TempDir()
	r := harness(t, home, nil, "lint", doc)
	require.Equal(t, 0, r.code, r.stderr)
	r = harness(t, home, nil, "install", doc, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []string{"canteen"}, listIDs(t, home, nil))
	require.Equal(t, []string{"canteen__halls"}, toolNames(t, home, nil, "canteen"))
	r = harness(t, home, nil, "run", "canteen", "halls", "--input", `{"hall": "学一"}`, "--services", services, "--secrets", secrets)
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"halls": [{"hall": "学一", "people": 120, "free": 280}], "asked": "学一"}`, r.stdout)
	require.NotContains(t, r.stdout+r.stderr, session)
	require.NotContains(t, r.stdout+r.stderr, "t0ken")
	mu.Lock()
	require.Equal(t, []string{"/api/canteen/学一/crowd"}, paths)
	mu.Unlock()
}
