package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/simcampus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// harness record against the simulated campus (its services and sessions
// as files, and --campus) and against a loopback web origin writes a case
// that holds no session value and no personal value, and harness test
// replays it to the same result with nothing running.
func TestRecordReplaysOffline(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	run := func(args ...string) result {
		t.Helper()
		return invocation{dir: work, home: home, args: args, limit: time.Minute}.run(t)
	}
	r := run("init", "wallet", "--campus", "card")
	require.Equal(t, 0, r.code, r.stderr)

	campus, err := simcampus.Start()
	require.NoError(t, err)
	services := filepath.Join(work, "services.yaml")
	secrets := filepath.Join(work, "secrets.yaml")
	require.NoError(t, os.WriteFile(services, campus.ServicesYAML(), 0o644))
	require.NoError(t, os.WriteFile(secrets, campus.SecretsYAML(), 0o600))
	var values []string
	for _, e := range campus.Secrets() {
		for _, m := range []map[string]string{e.Cookies, e.Headers} {
			for _, v := range m {
				values = append(values, v)
			}
		}
	}
	require.NotEmpty(t, values)

	r = run("record", "wallet", "lookup", "--services", services, "--secrets", secrets,
		"--scrub", simcampus.DemoStudentID, "--scrub", simcampus.DemoStudentName, "--scrub", "123456", "-o", "tests/live.yaml")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "wrote wallet/tests/live.yaml")
	var live map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &live), "the result on stdout, as harness run prints it")
	assert.Contains(t, r.stdout, simcampus.DemoStudentID)
	text := readFile(t, filepath.Join(work, "wallet", "tests", "live.yaml"))
	for _, v := range values {
		assert.NotContains(t, text, v, "a session value")
	}
	for _, v := range []string{simcampus.DemoStudentID, simcampus.DemoStudentName, "123456"} {
		assert.NotContains(t, text, v, "a personal value")
	}
	assert.Contains(t, text, "elec_accamt", "the response as the steps saw it")

	// Nothing answers any more: the replay needs no campus.
	campus.Close()
	r = run("test", "wallet")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok   wallet: 3 cases passed")

	// --campus: the simulated campus's student is scrubbed without being named.
	r = run("record", "wallet", "lookup", "--campus", "-o", "tests/campus.yaml", "--name", "the card, live")
	require.Equal(t, 0, r.code, r.stderr)
	text = readFile(t, filepath.Join(work, "wallet", "tests", "campus.yaml"))
	for _, v := range []string{simcampus.DemoStudentID, simcampus.DemoStudentName, "bearer ", "eyJ"} {
		assert.NotContains(t, text, v)
	}
	assert.Contains(t, text, "name: the card, live")
	r = run("test", "wallet")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok   wallet: 4 cases passed")

	// An existing file is never replaced without --force.
	before := readFile(t, filepath.Join(work, "wallet", "tests", "campus.yaml"))
	r = run("record", "wallet", "lookup", "--campus", "-o", "tests/campus.yaml")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "exists: pass --force")
	assert.Equal(t, before, readFile(t, filepath.Join(work, "wallet", "tests", "campus.yaml")))
	r = run("record", "wallet", "lookup", "--campus", "-o", "tests/campus.yaml", "--force")
	assert.Equal(t, 0, r.code, r.stderr)

	// A web origin, reached on loopback with --resolve.
	r = run("init", "board", "--web", "http://board.example.edu.cn:8080")
	require.Equal(t, 0, r.code, r.stderr)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "board-cookie-s3cr3t"})
		if req.URL.Path != "/" {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<ul><li><a href="/u/hanmeimei">Han Meimei's page</a></li><li><a href="/n/1">开学</a></li></ul>`))
	}))
	resolve := "board.example.edu.cn:8080:" + srv.Listener.Addr().String()
	r = run("record", "board", "links", "--resolve", resolve, "--scrub", "Han Meimei", "--scrub", "hanmeimei", "-o", "tests/live.yaml")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Han Meimei")
	text = readFile(t, filepath.Join(work, "board", "tests", "live.yaml"))
	for _, v := range []string{"Han Meimei", "hanmeimei", "board-cookie-s3cr3t"} {
		assert.NotContains(t, text, v)
	}
	assert.Contains(t, text, "origin: 'http://board.example.edu.cn:8080'")
	assert.Contains(t, text, "开学")
	srv.Close()
	r = run("test", "board")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok   board: 3 cases passed")
	r = run("record", "board", "links", "--resolve", resolve, "-o", "tests/down.yaml")
	assert.Equal(t, 1, r.code, "the origin is down: the run fails")
	assert.Contains(t, r.stderr, "nothing recorded")
	assert.NoFileExists(t, filepath.Join(work, "board", "tests", "down.yaml"))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
