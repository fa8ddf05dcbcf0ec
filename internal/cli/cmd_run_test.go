package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skeletonPortal answers the skeleton's request only with the session.
func skeletonPortal(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("JSESSIONID"); err != nil || c.Value != "s3cr3t-session" {
			http.Redirect(w, r, "/iaaa/login?from=portal", http.StatusFound)
			return
		}
		if r.URL.EscapedPath() != "/api/classrooms/%E4%BA%8C%E6%95%99/free" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"busy","echo":"s3cr3t-session"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"rooms": []any{map[string]any{"name": "二教101", "capacity": 120}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func campusFiles(t *testing.T, origin string, secret bool) (services, secrets string) {
	dir := t.TempDir()
	services = filepath.Join(dir, "services.yaml")
	require.NoError(t, os.WriteFile(services, []byte("portal:\n  origin: "+origin+"\n  auth:\n    cookies: [JSESSIONID]\n  login:\n    redirect: /iaaa/login\n"), 0o600))
	secrets = filepath.Join(dir, "secrets.yaml")
	val := "s3cr3t-session"
	if !secret {
		val = "expired"
	}
	require.NoError(t, os.WriteFile(secrets, []byte("portal:\n  cookies: { JSESSIONID: \""+val+"\" }\n"), 0o600))
	return services, secrets
}

func skeletonPath() string { return filepath.Join("..", "..", "testdata", "skeleton") }

func TestRunSkeleton(t *testing.T) {
	srv := skeletonPortal(t)
	services, secrets := campusFiles(t, srv.URL, true)
	home := t.TempDir()
	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "run", skeletonPath(), "free",
		"--input", `{"building":"二教"}`, "--services", services, "--secrets", secrets, "--trace")
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `{"building":"二教","rooms":[{"room":"二教101","seats":120}]}`, out)
	assert.Contains(t, errs, "trace: tools/free.yaml:12:5: step 1 (request)")
	assert.Contains(t, errs, "step 3 (jq)")
	assert.Contains(t, errs, "step 2 (fail)")
	assert.NotContains(t, errs+out, "s3cr3t")
}

func TestRunSkeletonFails(t *testing.T) {
	srv := skeletonPortal(t)
	services, secrets := campusFiles(t, srv.URL, true)
	code, out, errs := runCLI(t, nil, "run", skeletonPath(), "free",
		"--input", `{"building":"三教"}`, "--services", services, "--secrets", secrets, "--trace")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "harness: tools/free.yaml:19:5: step 2 (fail): The portal answered 503\n")
	assert.NotContains(t, errs, "s3cr3t", "the trace shows the body, redacted")
}

func TestRunLoginRequired(t *testing.T) {
	srv := skeletonPortal(t)
	services, secrets := campusFiles(t, srv.URL, false)
	code, out, errs := runCLI(t, nil, "run", skeletonPath(), "free",
		"--input", `{"building":"二教"}`, "--services", services, "--secrets", secrets)
	require.Equal(t, 0, code, errs)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, "login_required", v["status"])
	assert.Equal(t, "portal", v["service"])
}

func TestRunUsage(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown tool":   {"run", skeletonPath(), "nope"},
		"bad json":       {"run", skeletonPath(), "free", "--input", "{"},
		"not an object":  {"run", skeletonPath(), "free", "--input", "[1]"},
		"schema":         {"run", skeletonPath(), "free", "--input", `{"building": 3}`},
		"missing field":  {"run", skeletonPath(), "free"},
		"bad actor":      {"run", skeletonPath(), "free", "--actor", "robot"},
		"bad flag":       {"run", skeletonPath(), "free", "--nope"},
		"one argument":   {"run", skeletonPath()},
		"bad resolve":    {"run", skeletonPath(), "free", "--resolve", "x"},
		"resolve a name": {"run", skeletonPath(), "free", "--resolve", "a.cn:443:b.cn"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errs := runCLI(t, nil, args...)
			assert.Equal(t, 2, code, errs)
			assert.Empty(t, out)
		})
	}
	code, _, errs := runCLI(t, nil, "run", skeletonPath(), "free", "--input", `{"building": 3}`)
	require.Equal(t, 2, code)
	assert.Contains(t, errs, "/building")
}

func TestRunNoDocument(t *testing.T) {
	// A home of its own: looking the argument up as an id opens the store.
	code, _, errs := runCLI(t, map[string]string{"HARNESS_HOME": t.TempDir()}, "run", filepath.Join(t.TempDir(), "nothing"), "free")
	assert.Equal(t, 2, code, "a name that names nothing is a usage error, as an unknown tool is")
	assert.Contains(t, errs, "no document at")
}

const permDoc = `---
id: perm
name: Perm
description: Permission rules.
version: 1.0.0
---
Instructions.
`

func TestRunPermissions(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":       permDoc,
		"tools/look.yaml": "description: Read.\neffect: read\nsteps:\n  - return: '{ok: true}'\n",
		"tools/post.yaml": "description: Write.\neffect: write\nsteps:\n  - return: '{posted: true}'\n",
		"tools/pay.yaml":  "description: Pay.\neffect: money\nuserOnly: true\nsteps:\n  - return: '{paid: true}'\n",
	})
	cases := []struct {
		tool  string
		flags []string
		code  int
		why   string
	}{
		{"look", []string{"--actor", "scheduler"}, 0, ""},
		{"post", []string{"--actor", "scheduler"}, 3, "the scheduler may call only read tools"},
		{"post", []string{"--actor", "scheduler", "--approve"}, 3, "scheduler"},
		{"pay", []string{"--actor", "agent", "--approve"}, 3, "for the user only"},
		{"pay", []string{"--actor", "scheduler"}, 3, "for the user only"},
		{"pay", nil, 0, ""},
		{"post", []string{"--actor", "agent"}, 3, "--approve"},
		{"post", []string{"--actor", "agent", "--approve"}, 0, ""},
		// An official document's write asks too, unless its defaultModes say auto.
		{"post", []string{"--actor", "agent", "--trust", "official"}, 3, "--approve"},
		{"look", []string{"--actor", "agent", "--tainted"}, 0, ""},
		{"post", nil, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.tool+" "+strings.Join(c.flags, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, nil, append([]string{"run", dir, c.tool}, c.flags...)...)
			assert.Equal(t, c.code, code, errs)
			if c.code == 3 {
				assert.Empty(t, out)
				assert.Contains(t, errs, c.why)
			} else {
				assert.NotEmpty(t, out)
			}
		})
	}
}

// TestRunOfficialModes: an official document's defaultModes apply; a
// tainted turn still asks before the agent's write.
func TestRunOfficialModes(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":       strings.Replace(permDoc, "version: 1.0.0\n", "version: 1.0.0\ndefaultModes: {write: auto, money: off}\n", 1),
		"tools/post.yaml": "description: Write.\neffect: write\nsteps:\n  - return: '{posted: true}'\n",
		"tools/pay.yaml":  "description: Pay.\neffect: money\nsteps:\n  - return: '{paid: true}'\n",
	})
	for _, c := range []struct {
		tool  string
		flags []string
		code  int
		why   string
	}{
		{"post", []string{"--actor", "agent", "--trust", "official"}, 0, ""},
		{"post", []string{"--actor", "agent", "--trust", "official", "--tainted"}, 3, "untrusted data"},
		{"post", []string{"--actor", "agent", "--trust", "official", "--tainted", "--approve"}, 0, ""},
		// Community documents cannot loosen: write asks whatever the document says.
		{"post", []string{"--actor", "agent"}, 3, "--approve"},
		// Off refuses the agent and the scheduler; the user's own call runs.
		{"pay", []string{"--trust", "official"}, 0, ""},
		{"pay", []string{"--actor", "agent", "--trust", "official", "--approve"}, 3, "off"},
		{"pay", []string{"--actor", "scheduler", "--trust", "official"}, 3, "scheduler"},
	} {
		t.Run(c.tool+" "+strings.Join(c.flags, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, nil, append([]string{"run", dir, c.tool}, c.flags...)...)
			assert.Equal(t, c.code, code, errs)
			if c.code == 3 {
				assert.Empty(t, out)
				assert.Contains(t, errs, c.why)
			} else {
				assert.NotEmpty(t, out)
			}
		})
	}
}

// TestRunBundledByID: an id that is not a path finds a bundled official
// document (or an installed one); an unknown id is a usage error (exit 2).
func TestRunBundledByID(t *testing.T) {
	env := map[string]string{"HARNESS_HOME": t.TempDir()}
	code, out, errs := runCLI(t, env, "run", "--campus", "wallet", "cardBalance")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "balanceYuan")
	code, out, errs = runCLI(t, env, "run", "no-such-plugin", "x")
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "no installed or bundled plugin")
}

func TestRunInvalidDocument(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":      permDoc,
		"tools/bad.yaml": "description: Bad.\neffect: read\nsteps:\n  - jq: '.a |'\n",
	})
	code, out, errs := runCLI(t, nil, "run", dir, "bad")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "tools/bad.yaml:4:14: jq syntax error: unexpected EOF")
}

func TestRunWebResolve(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<ul><li><a href="/n/1">停课</a></li></ul>`))
	}))
	defer srv.Close()
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md": "---\nid: news\nname: N\ndescription: N.\nversion: 1.0.0\naccess:\n  web: [http://news.example.edu.cn]\n---\nI.\n",
		"tools/list.yaml": "description: L.\neffect: read\nsteps:\n  - request:\n      url: http://news.example.edu.cn/list\n" +
			"  - html:\n      select: li\n      fields: { title: a, link: { select: a, attr: href } }\n",
	})
	code, out, errs := runCLI(t, nil, "run", dir, "list", "--resolve", "news.example.edu.cn:80:"+srv.Listener.Addr().String())
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `[{"title":"停课","link":"/n/1"}]`, out)
}

func TestRunKVStore(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":        "---\nid: counter\nname: C\ndescription: C.\nversion: 1.0.0\naccess:\n  abilities: [kv]\n---\nI.\n",
		"tools/count.yaml": "description: C.\neffect: write\nsteps:\n  - kv_get: n\n  - kv_set: { key: n, value: '(. // 0) + 1' }\n",
	})
	home := t.TempDir()
	env := map[string]string{"HARNESS_HOME": home}
	for want := 1; want <= 2; want++ {
		code, out, errs := runCLI(t, env, "run", dir, "count")
		require.Equal(t, 0, code, errs)
		assert.Equal(t, fmt.Sprintf("%d\n", want), out)
	}
	// A local document is community by default: its store is apart from
	// the official one's of the same id.
	b, err := os.ReadFile(filepath.Join(home, "community", "kv", "counter.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"n":2}`, string(b))
	code, out, errs := runCLI(t, env, "run", dir, "count", "--trust", "official")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "1\n", out, "an official document read a community one's store")
	b, err = os.ReadFile(filepath.Join(home, "kv", "counter.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"n":1}`, string(b))
}

// A --secrets file other users can read still works (it is the user's
// file), with a warning that names the file and its mode, never a value.
func TestRunSecretsFileModeWarns(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are Unix's")
	}
	srv := skeletonPortal(t)
	services, secrets := campusFiles(t, srv.URL, true)
	args := []string{"run", skeletonPath(), "free", "--input", `{"building":"二教"}`, "--services", services, "--secrets", secrets}
	code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": t.TempDir()}, args...)
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "warning", "a 0600 file needs no warning")

	require.NoError(t, os.Chmod(secrets, 0o644))
	code, out2, errs := runCLI(t, map[string]string{"HARNESS_HOME": t.TempDir()}, args...)
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, out, out2)
	assert.Contains(t, errs, "harness: warning: "+secrets+" can be read by other users of this machine (mode 0644): chmod 600 it")
	assert.NotContains(t, errs+out2, "s3cr3t")
}

// TestRunPrintsTheModelsCopyAndFullTheWhole: harness run prints the
// result as the agent gets it (cut at 12,000 characters); --full prints it
// whole.
func TestRunPrintsTheModelsCopyAndFullTheWhole(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":       "---\nid: big\nname: B\ndescription: d\nversion: 1.0.0\n---\nI.\n",
		"tools/list.yaml": "description: d\neffect: read\nsteps:\n  - return: '[range(3000) | {n: .}]'\n",
	})
	code, out, errs := runCLI(t, nil, "run", dir, "list")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"truncated":true`)
	assert.LessOrEqual(t, len([]rune(strings.TrimSpace(out))), 12000)
	code, out, errs = runCLI(t, nil, "run", dir, "list", "--full")
	require.Equal(t, 0, code, errs)
	var whole []map[string]int
	require.NoError(t, json.Unmarshal([]byte(out), &whole))
	require.Len(t, whole, 3000)
}
