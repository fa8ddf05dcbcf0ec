package proxy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, name, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), mode))
	require.NoError(t, os.Chmod(p, mode))
	return p
}

func TestLoadSecrets(t *testing.T) {
	p := writeFile(t, "secrets.yaml", `
card:
  cookies: { JSESSIONID: "s3cr3t-session" }
  headers: { Authorization: "Bearer t0ken" }
portal:
  headers: { synjones-auth: "bearer abc.def.ghi" }
`, 0o644)
	s, err := LoadSecrets(p)
	require.NoError(t, err)
	assert.Equal(t, "s3cr3t-session", s["card"].Cookies["JSESSIONID"])
	assert.Equal(t, "Bearer t0ken", s["card"].Headers["Authorization"])
	assert.Equal(t, "bearer abc.def.ghi", s["portal"].Headers["Synjones-Auth"], "header names are canonical")

	for text, want := range map[string]string{
		"card:\n  cookie: {a: bcdefgh}\n":            `unknown key "cookie" in secrets of "card" (did you mean "cookies"?)`,
		"card:\n  cookies: {a: 123456}\n":            `must be a string`,
		"card:\n  cookies: {a: \"x\"}\n":             `shorter than 4`,
		"card:\n  cookies: {a: \"abc;def=1\"}\n":     `may not hold`,
		"card:\n  headers: {Host: \"evilhost\"}\n":   `cannot hold a credential`,
		"card:\n  headers: {X: \"ab\\r\\ncdef\"}\n":  `control character`,
		"Card:\n  cookies: {a: bcdefgh}\n":           `service name "Card"`,
		"card: &x\n  cookies: {a: bcdefgh}\nb: *x\n": `anchors`,
		"card:\n  cookies: {a: bcdefgh}\ncard: {}\n": `duplicate key`,
		"- card\n": `must be a mapping`,
		"card:\n  cookies: {a: \"s3cr3t-VALUE-zz\", a: \"other-VALUE\"}\n": `duplicate key`,
	} {
		p := writeFile(t, "s.yaml", text, 0o600)
		_, err := LoadSecrets(p)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want, text)
		assert.Contains(t, err.Error(), p+":", "errors carry FILE:LINE:COL")
		for _, v := range []string{"bcdefgh", "abc;def", "evilhost", "s3cr3t-VALUE-zz", "other-VALUE"} {
			assert.NotContains(t, err.Error(), v, "an error quotes a secret value")
		}
	}
}

// TestLoadSecretsNotAMappingIsOneError: a secrets file that is a list gives
// its one error; its items are not read as service names.
func TestLoadSecretsNotAMappingIsOneError(t *testing.T) {
	p := writeFile(t, "s.yaml", "- Bad\n- other\n", 0o600)
	_, err := LoadSecrets(p)
	var l *diag.List
	require.ErrorAs(t, err, &l)
	require.Len(t, l.Errors(), 1, err.Error())
	assert.Equal(t, p+":1:1: the secrets file must be a mapping, not a list", err.Error())
}

func TestKeystoreFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "home", "keystore.json")
	ks, err := OpenKeystore(path)
	require.NoError(t, err)
	_, ok := ks.Get("card")
	assert.False(t, ok)
	require.NoError(t, ks.Put("card", &ServiceSecrets{Headers: map[string]string{"synjones-auth": cardToken}}))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.NoError(t, ks.Update("portal", map[string]string{"SESSION": portalSess}))
	require.NoError(t, ks.Update("portal", map[string]string{"JSESSIONID": portalJSess}))

	ks2, err := OpenKeystore(path)
	require.NoError(t, err)
	ss, ok := ks2.Get("portal")
	require.True(t, ok)
	assert.Equal(t, map[string]string{"SESSION": portalSess, "JSESSIONID": portalJSess}, ss.Cookies)
	assert.Equal(t, []string{"card", "portal"}, ks2.Services())
	require.NoError(t, ks2.Delete("card"))
	ks3, err := OpenKeystore(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"portal"}, ks3.Services())
	// No temp file is left behind; the lock file stays (mode 0600).
	ents, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"keystore.json", "keystore.json.lock"}, names)
	st, err = os.Stat(path + ".lock")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// A value from Get never changes under its reader (copy on write).
	before, _ := ks3.Get("portal")
	require.NoError(t, ks3.Update("portal", map[string]string{"SESSION": "portalSess-NEW-000111"}))
	assert.Equal(t, portalSess, before.Cookies["SESSION"])
	// Unstorable refreshed values are refused without quoting them.
	err = ks3.Update("portal", map[string]string{"SESSION": "a;b"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "a;b")
}

func TestKeystoreRefusesLooseFiles(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		p := writeFile(t, "keystore.json", `{"version":1,"services":{}}`, mode)
		_, err := OpenKeystore(p)
		require.Error(t, err, mode)
		assert.Contains(t, err.Error(), "chmod 600")
	}
	dir := t.TempDir()
	target := writeFile(t, "real.json", `{"version":1,"services":{}}`, 0o600)
	link := filepath.Join(dir, "keystore.json")
	require.NoError(t, os.Symlink(target, link))
	_, err := OpenKeystore(link)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a regular file")

	for text, want := range map[string]string{
		`{"version":2,"services":{}}`: "version 2",
		`{"version":1,"services":{"card":{"cookies":{"a":"s3cr3tvalue"}}},"x":1}`: "not valid keystore JSON",
		`{"version":1,"services":{"card":{"cookies":{"a":"s3"}}}}`:                "shorter",
		`not json s3cr3tvalue`: "not valid keystore JSON",
	} {
		p := writeFile(t, "keystore.json", text, 0o600)
		_, err := OpenKeystore(p)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want)
		assert.NotContains(t, err.Error(), "s3cr3tvalue")
	}
}

func TestKeystoreConcurrentUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keystore.json")
	ks, err := OpenKeystore(path)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := "c" + strings.Repeat("x", i)
			assert.NoError(t, ks.Update("portal", map[string]string{name: "value-" + name}))
			ks.Get("portal")
		}(i)
	}
	wg.Wait()
	ks2, err := OpenKeystore(path)
	require.NoError(t, err)
	ss, _ := ks2.Get("portal")
	assert.Len(t, ss.Cookies, 16)
}

// Several keystores on one file (another process's, or a second one in
// this process) refreshing sessions at once lose no update: each change
// reads the file again under the file lock.
func TestKeystoreInstancesShareTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keystore.json")
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ks, err := OpenKeystore(path)
			if !assert.NoError(t, err) {
				return
			}
			for j := 0; j < 8; j++ {
				name := fmt.Sprintf("c%d_%d", i, j)
				assert.NoError(t, ks.Update("portal", map[string]string{name: "value-" + name}))
			}
		}(i)
	}
	wg.Wait()
	ks, err := OpenKeystore(path)
	require.NoError(t, err)
	ss, _ := ks.Get("portal")
	assert.Len(t, ss.Cookies, 32)
}

// TestKeystoreHelperProcess is a child process of
// TestKeystoreConcurrentProcesses: it refreshes N cookies one by one.
func TestKeystoreHelperProcess(t *testing.T) {
	path := os.Getenv("PROXY_KEYSTORE_CHILD")
	if path == "" {
		t.Skip("only as a child process")
	}
	prefix := os.Getenv("PROXY_KEYSTORE_PREFIX")
	n, _ := strconv.Atoi(os.Getenv("PROXY_KEYSTORE_N"))
	ks, err := OpenKeystore(path)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		require.NoError(t, ks.Update("portal", map[string]string{name: "value-" + name}))
		if i%5 == 0 {
			// Another service's session replaced now and then.
			require.NoError(t, ks.Put(prefix+"svc", &ServiceSecrets{Headers: map[string]string{"X-Token": "token-" + name}}))
		}
	}
}

func TestKeystoreConcurrentProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keystore.json")
	// A session stored before, which both processes must keep.
	ks, err := OpenKeystore(path)
	require.NoError(t, err)
	require.NoError(t, ks.Put("card", &ServiceSecrets{Headers: map[string]string{"synjones-auth": cardToken}}))
	const n = 25
	var cmds []*exec.Cmd
	for _, prefix := range []string{"a", "b"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKeystoreHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PROXY_KEYSTORE_CHILD="+path, "PROXY_KEYSTORE_PREFIX="+prefix, "PROXY_KEYSTORE_N="+strconv.Itoa(n))
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	// This process refreshes too, through the instance opened before the
	// children started (its view of the file is stale).
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p%d", i)
		require.NoError(t, ks.Update("portal", map[string]string{name: "value-" + name}))
	}
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait())
	}
	got, err := OpenKeystore(path)
	require.NoError(t, err)
	ss, ok := got.Get("portal")
	require.True(t, ok)
	assert.Len(t, ss.Cookies, 3*n, "every process's every update is kept")
	for _, prefix := range []string{"a", "b", "p"} {
		assert.Equal(t, "value-"+prefix+"7", ss.Cookies[prefix+"7"])
	}
	card, _ := got.Get("card")
	assert.Equal(t, cardToken, card.Headers["Synjones-Auth"])
	assert.Equal(t, []string{"asvc", "bsvc", "card", "portal"}, got.Services())
	// The instance opened before the children sees their changes after
	// its next change.
	require.NoError(t, ks.Update("portal", map[string]string{"p0": "value-p0"}))
	assert.Equal(t, []string{"asvc", "bsvc", "card", "portal"}, ks.Services())
}

func TestMemKeystore(t *testing.T) {
	src := testSecrets()
	ks := MemKeystore(src)
	ss, ok := ks.Get("card")
	require.True(t, ok)
	assert.Equal(t, cardToken, ss.Headers["Synjones-Auth"])
	require.NoError(t, ks.Update("portal", map[string]string{"SESSION": "fresh-value-1234"}))
	ss, _ = ks.Get("portal")
	assert.Equal(t, "fresh-value-1234", ss.Cookies["SESSION"])
	assert.Equal(t, portalSess, src["portal"].Cookies["SESSION"], "the secrets file's content is not changed")
}
