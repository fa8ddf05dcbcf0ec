package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/dirhash"
)

const (
	sessionCookie = "s3cr3t-session-e2e-7f3a"
	bearerToken   = "t0ken-e2e-91bc44"
)

// skeleton copies the contract's example document into a temp folder.
func skeleton(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"PLUGIN.md", "tools/free.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "skeleton", filepath.FromSlash(name)))
		require.NoError(t, err)
		writeFiles(t, dir, map[string]string{name: string(b)})
	}
	return dir
}

var diagLine = regexp.MustCompile(`^[^:\s]+:\d+:\d+: .+$`)

func TestLintHashReview(t *testing.T) {
	home := t.TempDir()
	doc := skeleton(t)
	r := harness(t, home, nil, "lint", doc)
	require.Equal(t, 0, r.code, r.stderr)

	bad := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md":    "---\nid: Bad_Id\nname: x\ndescription: y\nversion: 1.0.0\naccess:\n  campus: [portal]\n---\nhi\n",
		"tools/t.yaml": "description: t\neffect: reed\nsteps:\n  - jq: '.[ '\n",
		"tools/u.yaml": "description: u\neffect: read\nsteps:\n  - request: {service: card, path: /x}\n",
		"tools/v.yaml": "description: v\neffect: read\nsteps:\n  - request: {service: portal, path: /x, headers: {Cookie: a=b}}\n",
		"tools/w.yaml": "description: w\neffect: read\nsteps:\n  - html: {from: .body, select: 'div[', fields: {a: b}}\n",
		"tools/x.yaml": "description: x\neffect: read\nsteps:\n  - jqq: '.'\n",
	})
	r = harness(t, home, nil, "lint", bad)
	require.Equal(t, 1, r.code)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	require.GreaterOrEqual(t, len(lines), 6, r.stderr)
	for _, ln := range lines {
		require.Regexp(t, diagLine, ln)
	}
	for _, want := range []string{"PLUGIN.md:2:5: ", "tools/t.yaml:2:9: ", "tools/t.yaml:4:", "tools/u.yaml:4:", "tools/v.yaml:4:", "tools/w.yaml:4:", "tools/x.yaml:4:"} {
		require.Contains(t, r.stderr, want)
	}
	require.NotContains(t, r.stderr, bad, "FILE is relative to PATH")

	// A single PLUGIN.md file.
	single := writeFiles(t, t.TempDir(), map[string]string{"PLUGIN.md": "---\nid: one\nname: One\ndescription: d\nversion: 1.0.0\n---\nx\n\n```yaml tool t\ndescription: t\neffect: read\nsteps:\n  - return: '1'\n```\n"})
	r = harness(t, home, nil, "lint", filepath.Join(single, "PLUGIN.md"))
	require.Equal(t, 0, r.code, r.stderr)

	r = harness(t, home, nil, "hash", doc)
	require.Equal(t, 0, r.code, r.stderr)
	want, err := dirhash.HashDir(doc, "", dirhash.Hash1)
	require.NoError(t, err)
	require.Equal(t, want, strings.TrimSpace(r.stdout))

	r = harness(t, home, nil, "review", doc, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var sheet map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sheet), r.stdout)
	for _, k := range []string{"id", "version", "hash", "trust"} {
		require.Contains(t, sheet, k)
	}
	require.Equal(t, "classrooms-example", sheet["id"])
	require.Equal(t, want, sheet["hash"])
	require.Equal(t, "community", sheet["trust"])
	require.Contains(t, r.stdout, `"read"`)
	require.Contains(t, r.stdout, "portal")
	require.Contains(t, r.stdout, "/api/classrooms/")

	r = harness(t, home, nil, "review", doc)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "classrooms-example")

	r = harness(t, home, nil, "review", bad, "--json")
	require.Equal(t, 1, r.code)
}

func TestDiff(t *testing.T) {
	home := t.TempDir()
	old := skeleton(t)
	wider := skeleton(t)
	b, err := os.ReadFile(filepath.Join(wider, "PLUGIN.md"))
	require.NoError(t, err)
	writeFiles(t, wider, map[string]string{"PLUGIN.md": strings.Replace(string(b), "  campus:\n", "  campus:\n    - card\n", 1)})
	narrower := skeleton(t)
	writeFiles(t, narrower, map[string]string{"PLUGIN.md": strings.Replace(string(b), "  abilities: [kv]\n", "", 1)})

	for _, tc := range []struct {
		new   string
		wider bool
	}{{wider, true}, {narrower, false}, {old, false}} {
		r := harness(t, home, nil, "diff", old, tc.new, "--json")
		require.Equal(t, 0, r.code, r.stderr)
		var d struct {
			Wider   *bool             `json:"wider"`
			Changes []json.RawMessage `json:"changes"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
		require.NotNil(t, d.Wider)
		require.Equal(t, tc.wider, *d.Wider)
		require.NotNil(t, d.Changes, "changes is a list, even when empty")
		if tc.new != old {
			require.NotEmpty(t, d.Changes)
		} else {
			require.Empty(t, d.Changes)
		}
	}
}

// portal is a loopback campus service that requires the session cookie.
type portal struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []*http.Request
}

func newPortal(t *testing.T, handler func(w http.ResponseWriter, r *http.Request)) *portal {
	p := &portal{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.got = append(p.got, r.Clone(r.Context()))
		p.mu.Unlock()
		if c, err := r.Cookie("JSESSIONID"); err != nil || c.Value != sessionCookie {
			http.Redirect(w, r, "/iaaa/login?from=portal", http.StatusFound)
			return
		}
		handler(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *portal) requests() []*http.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*http.Request(nil), p.got...)
}

// files writes the services and secrets files of the contract's shape.
func serviceFiles(t *testing.T, origin string) (services, secrets string) {
	dir := t.TempDir()
	services = filepath.Join(dir, "services.yaml")
	secrets = filepath.Join(dir, "secrets.yaml")
	require.NoError(t, os.WriteFile(services, []byte("portal:\n  origin: "+origin+"\n  auth:\n    cookies: [JSESSIONID]\n    headers: [Authorization]\n  login:\n    redirect: /iaaa/login\n"), 0o644))
	require.NoError(t, os.WriteFile(secrets, []byte("portal:\n  cookies: { JSESSIONID: \""+sessionCookie+"\" }\n  headers: { Authorization: \"Bearer "+bearerToken+"\" }\n"), 0o600))
	return services, secrets
}

func requireNoSecret(t *testing.T, r result) {
	t.Helper()
	for _, s := range []string{sessionCookie, bearerToken} {
		require.NotContains(t, r.stdout, s)
		require.NotContains(t, r.stderr, s)
	}
}

func TestRunSkeleton(t *testing.T) {
	home := t.TempDir()
	doc := skeleton(t)
	p := newPortal(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/classrooms/") && strings.HasSuffix(r.URL.Path, "/free"):
			if strings.Contains(r.URL.EscapedPath(), "503") {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, "down; your cookie was "+r.Header.Get("Cookie"))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			// An echo of the credentials must never reach the plugin.
			_, _ = io.WriteString(w, `{"rooms":[{"name":"101","capacity":120},{"name":"203","capacity":48}],"echo":"`+r.Header.Get("Cookie")+` `+r.Header.Get("Authorization")+`"}`)
		default:
			http.NotFound(w, r)
		}
	})
	services, secrets := serviceFiles(t, p.srv.URL)
	base := []string{"--services", services, "--secrets", secrets}

	r := harness(t, home, nil, append([]string{"run", doc, "free", "--input", `{"building":"二教"}`}, base...)...)
	require.Equal(t, 0, r.code, r.stderr)
	requireNoSecret(t, r)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.Equal(t, map[string]any{"building": "二教", "rooms": []any{
		map[string]any{"room": "101", "seats": 120.0}, map[string]any{"room": "203", "seats": 48.0}}}, out)
	reqs := p.requests()
	require.NotEmpty(t, reqs)
	last := reqs[len(reqs)-1]
	require.Equal(t, "zh", last.URL.Query().Get("lang"))
	require.Equal(t, "/api/classrooms/二教/free", last.URL.Path)

	// --trace: the steps on stderr, no credential.
	r = harness(t, home, nil, append([]string{"run", doc, "free", "--input", `{"building":"二教"}`, "--trace"}, base...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "request")
	requireNoSecret(t, r)

	// An input that tries to leave the path prefix either stays one escaped
	// segment (exit 0, one request) or is refused before anything is sent
	// (exit 1: a value that would add a segment or a dot segment cannot be
	// escaped into a path that every server reads as one segment).
	for evil, sent := range map[string]bool{
		"../../admin": false, "x/../../y": false, "..%2f..%2fadmin": false, "//evil.example/x": false,
		"\\\\evil": false, "..": false, "a?b=c#d": true, "@evil.example": true, "http://evil.example/": false,
		"%2e%2e": false, "楼 1;x=y": true,
	} {
		in, _ := json.Marshal(map[string]string{"building": evil})
		before := len(p.requests())
		r = harness(t, home, nil, append([]string{"run", doc, "free", "--input", string(in)}, base...)...)
		requireNoSecret(t, r)
		reqs := p.requests()
		if !sent {
			require.Equal(t, 1, r.code, "%s: %s", evil, r.stdout)
			require.Empty(t, r.stdout)
			require.NotEmpty(t, r.stderr)
			require.Len(t, reqs, before, "%s was sent", evil)
			continue
		}
		require.Equal(t, 0, r.code, "%s: %s", evil, r.stderr)
		require.Len(t, reqs, before+1, evil)
		got := reqs[before].URL
		require.Equal(t, "/api/classrooms/"+evil+"/free", got.Path, "%s changed the path", evil)
		require.Equal(t, "lang=zh", got.RawQuery, "%s changed the query", evil)
	}

	// The step's fail: exit 1, a message on stderr, nothing on stdout.
	r = harness(t, home, nil, append([]string{"run", doc, "free", "--input", `{"building":"503"}`}, base...)...)
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "503")
	requireNoSecret(t, r)

	// Usage errors: exit 2.
	for _, args := range [][]string{
		{"run", doc, "free", "--input", `{}`},
		{"run", doc, "free", "--input", `{"building": 7}`},
		{"run", doc, "free", "--input", `not json`},
		{"run", doc, "nosuchtool"},
		{"run", "nosuch-plugin", "free"},
		{"run", doc, "free", "--no-such-flag"},
		{"run", doc, "free", "--actor", "robot", "--input", `{"building":"二教"}`},
	} {
		r = harness(t, home, nil, append(args, base...)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stdout)
	}
	r = harness(t, home, nil, append([]string{"run", doc, "free", "--input", `{}`}, base...)...)
	require.Contains(t, r.stderr, "building", "the message names the field")

	// No session: the login redirect is a status result, exit 0.
	other := filepath.Join(t.TempDir(), "secrets.yaml")
	require.NoError(t, os.WriteFile(other, []byte("portal:\n  cookies: { JSESSIONID: \"wrong-session-value\" }\n"), 0o600))
	r = harness(t, home, nil, "run", doc, "free", "--input", `{"building":"二教"}`, "--services", services, "--secrets", other)
	require.Equal(t, 0, r.code, r.stderr)
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.Equal(t, "login_required", st["status"])
	require.Equal(t, "portal", st["service"])
}

func TestRunPermissions(t *testing.T) {
	home := t.TempDir()
	p := newPortal(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	services, secrets := serviceFiles(t, p.srv.URL)
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md":       "---\nid: perms\nname: Perms\ndescription: effects\nversion: 1.0.0\naccess:\n  campus: [portal]\n---\nTools of every effect.\n",
		"tools/look.yaml": "description: reads\neffect: read\nsteps:\n  - request: {service: portal, path: /look}\n  - return: '.body'\n",
		"tools/book.yaml": "description: books\neffect: write\nsteps:\n  - request: {service: portal, method: POST, path: /book, form: {a: b}}\n  - return: '.body'\n",
		"tools/pay.yaml":  "description: pays\neffect: money\nsteps:\n  - request: {service: portal, method: POST, path: /pay}\n  - return: '.body'\n",
		"tools/mine.yaml": "description: user only\neffect: read\nuserOnly: true\nsteps:\n  - return: '{mine: true}'\n",
	})
	run := func(tool string, extra ...string) result {
		return harness(t, home, nil, append([]string{"run", doc, tool, "--services", services, "--secrets", secrets}, extra...)...)
	}
	for _, tc := range []struct {
		tool string
		args []string
		code int
	}{
		{"look", nil, 0},
		{"look", []string{"--actor", "agent"}, 0},
		{"look", []string{"--actor", "scheduler"}, 0},
		{"book", nil, 0}, // the user's own call
		{"book", []string{"--actor", "agent"}, 3}, // community write asks; no --approve
		{"book", []string{"--actor", "agent", "--approve"}, 0},
		{"book", []string{"--actor", "scheduler"}, 3}, // the scheduler reads only
		{"book", []string{"--actor", "scheduler", "--approve"}, 3},
		{"pay", []string{"--actor", "agent", "--tainted", "--approve"}, 0},
		{"pay", []string{"--actor", "agent", "--tainted"}, 3},
		{"mine", nil, 0},
		{"mine", []string{"--actor", "agent", "--approve"}, 3},
		{"mine", []string{"--actor", "scheduler"}, 3},
	} {
		r := run(tc.tool, tc.args...)
		require.Equal(t, tc.code, r.code, "%s %v: %s", tc.tool, tc.args, r.stderr)
		if tc.code == 3 {
			require.Empty(t, r.stdout)
			require.NotEmpty(t, r.stderr, "a refusal says why")
		}
	}
	// Refused calls never reach the service.
	before := len(p.requests())
	run("book", "--actor", "scheduler")
	require.Len(t, p.requests(), before)
}

func TestInstallListAcceptTools(t *testing.T) {
	home := t.TempDir()
	doc := skeleton(t)
	// Without --yes and without a terminal nothing is stored.
	r := harness(t, home, nil, "install", doc)
	require.Equal(t, 1, r.code)
	r = harness(t, home, nil, "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Empty(t, list)

	r = harness(t, home, nil, "install", doc, "--yes")
	require.Equal(t, 0, r.code, r.stderr)
	r = harness(t, home, nil, "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Len(t, list, 1)
	require.Equal(t, "classrooms-example", list[0]["id"])
	require.Equal(t, "community", list[0]["trust"])

	// --home wins over HARNESS_HOME.
	other := t.TempDir()
	r = harness(t, home, nil, "--home", other, "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Empty(t, list)

	// An installed document runs by its id.
	p := newPortal(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"rooms":[{"name":"301","capacity":60}]}`)
	})
	services, secrets := serviceFiles(t, p.srv.URL)
	r = harness(t, home, nil, "run", "classrooms-example", "free", "--input", `{"building":"三教"}`, "--services", services, "--secrets", secrets)
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"building":"三教","rooms":[{"room":"301","seats":60}]}`, r.stdout)

	r = harness(t, home, nil, "accept", "classrooms-example")
	require.Equal(t, 1, r.code, "nothing pending")
	r = harness(t, home, nil, "update", "--check")
	require.Equal(t, 0, r.code, r.stderr)
	r = harness(t, home, []string{"HARNESS_NOW=2026-12-01T08:00:00Z"}, "update")
	require.Equal(t, 0, r.code, r.stderr)

	r = harness(t, home, nil, "tools", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "classrooms-example__free")
	var cat any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &cat))
}

func TestAuthorTestsOfOfficialDocuments(t *testing.T) {
	dirs, err := filepath.Glob("../plugins-official/*/PLUGIN.md")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(dirs), 7)
	for _, d := range dirs {
		dir := filepath.Dir(d)
		r := harness(t, t.TempDir(), nil, "lint", dir)
		require.Equal(t, 0, r.code, "%s: %s", dir, r.stderr)
		r = harness(t, t.TempDir(), nil, "test", dir)
		require.Equal(t, 0, r.code, "%s: %s%s", dir, r.stdout, r.stderr)
	}
	// A failing case exits 1.
	bad := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md":      "---\nid: t\nname: T\ndescription: d\nversion: 1.0.0\n---\nx\n",
		"tools/one.yaml": "description: one\neffect: read\nsteps:\n  - return: '1'\n",
	})
	writeFiles(t, bad, map[string]string{"tests/one.yaml": wrongCase})
	r := harness(t, t.TempDir(), nil, "test", bad)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
}

// wrongCase expects 2 from a tool that returns 1.
const wrongCase = `cases:
  - name: one is not two
    tool: one
    expect:
      output: 2
`
