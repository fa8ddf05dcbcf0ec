package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The simulated campus's demo account values (internal/simcampus, fake and
// documented in docs/simcampus.md).
const (
	demoPassword = "pku-demo-2026"
	demoTOTP     = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	demoSMS      = "246810"
)

// startCampus runs `harness campus` and returns its services file once it
// serves; the process is ended when the test ends.
func startCampus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	services, addrs := filepath.Join(dir, "services.yaml"), filepath.Join(dir, "addrs")
	cmd := exec.Command(bin, "campus", "--services-out", services, "--secrets-out", filepath.Join(dir, "secrets.yaml"), "--addr-file", addrs)
	cmd.Env = append(os.Environ(), "HARNESS_HOME="+filepath.Join(dir, "home"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(addrs); err == nil && strings.Contains(string(b), "iaaa") {
			return services
		}
	}
	t.Fatal("harness campus did not start serving")
	return ""
}

// TestLoginEndToEnd drives `harness login` as a user does, the password
// (and codes) on stdin, against `harness campus`: refusals (a wrong
// password, a wrong OTP, too many attempts), the SMS path, a login that
// keeps the TOTP secret, a service hand-off whose session `harness run`
// then uses from the keystore, and logout.
func TestLoginEndToEnd(t *testing.T) {
	services := startCampus(t)
	home := t.TempDir()
	login := func(stdin string, args ...string) result {
		return invocation{home: home, stdin: stdin, limit: time.Minute, args: append([]string{"login", "--services", services}, args...)}.run(t)
	}
	noSecret := func(r result, secrets ...string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
				t.Errorf("a secret appears in the output: stdout %q stderr %q", r.stdout, r.stderr)
			}
		}
	}

	// A wrong password: E01, exit 1, nothing stored, the password nowhere.
	r := login("Xq9-bad-pass-77\n", "--user", "2100000001", "portal")
	if r.code != 1 || !strings.Contains(r.stderr, "E01") {
		t.Fatalf("wrong password: exit %d, stderr %s", r.code, r.stderr)
	}
	noSecret(r, "Xq9-bad-pass-77")
	if _, err := os.Stat(filepath.Join(home, "keystore.json")); err == nil {
		if b, _ := os.ReadFile(filepath.Join(home, "keystore.json")); strings.Contains(string(b), `"portal"`) {
			t.Fatalf("a refused login stored a session: %s", b)
		}
	}

	// A wrong OTP code: E05.
	r = login(demoPassword+"\n000000\n", "--user", "2100012345", "card")
	if r.code != 1 || !strings.Contains(r.stderr, "E05") || !strings.Contains(r.stderr, "OTP code") {
		t.Fatalf("wrong OTP: exit %d, stderr %s", r.code, r.stderr)
	}
	noSecret(r, demoPassword)

	// Too many attempts: five wrong passwords, then the right one: E21.
	for i := 0; i < 5; i++ {
		login("wrong-"+strings.Repeat("x", i+4)+"\n", "--user", "2100000001", "portal")
	}
	r = login(demoPassword+"\n", "--user", "2100000001", "portal")
	if r.code != 1 || !strings.Contains(r.stderr, "E21") || !strings.Contains(r.stderr, "30 minutes") {
		t.Fatalf("too many attempts: exit %d, stderr %s", r.code, r.stderr)
	}

	// The SMS path: the code is sent, asked for and used.
	smsHome := t.TempDir()
	r = invocation{home: smsHome, stdin: demoPassword + "\n" + demoSMS + "\n", limit: time.Minute,
		args: []string{"login", "--services", services, "--user", "2100054321", "wproc"}}.run(t)
	if r.code != 0 || !strings.Contains(r.stderr, "SMS code sent to 138****0000") || !strings.Contains(r.stdout, "wproc: logged in") {
		t.Fatalf("SMS login: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}

	// Success, keeping the TOTP secret: every default service.
	r = login(demoPassword+"\n"+demoTOTP+"\n", "--user", "2100012345", "--totp")
	if r.code != 0 {
		t.Fatalf("login: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	for _, s := range []string{"portal", "card", "treehole", "wproc", "xiaobei"} {
		if !strings.Contains(r.stdout, s+": logged in") {
			t.Errorf("no %s session: %s", s, r.stdout)
		}
	}
	noSecret(r, demoPassword, demoTOTP)
	ksPath := filepath.Join(home, "keystore.json")
	st, err := os.Stat(ksPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("keystore: %v, mode %v", err, st.Mode())
	}
	var ks struct {
		Services map[string]struct {
			Cookies map[string]string `json:"cookies"`
			Headers map[string]string `json:"headers"`
		} `json:"services"`
		Login struct{ User, Name, TOTP string } `json:"login"`
	}
	data, _ := os.ReadFile(ksPath)
	if err := json.Unmarshal(data, &ks); err != nil {
		t.Fatal(err)
	}
	if ks.Login.User != "2100012345" || ks.Login.TOTP != demoTOTP || ks.Login.Name != "张测试" {
		t.Errorf("login section %+v", ks.Login)
	}
	if !strings.HasPrefix(ks.Services["card"].Headers["Synjones-Auth"], "bearer ") {
		t.Errorf("card session %+v", ks.Services["card"])
	}
	for _, sess := range ks.Services {
		for _, v := range sess.Cookies {
			noSecret(r, v)
		}
		for _, v := range sess.Headers {
			noSecret(r, v)
		}
	}

	// The stored session signs an official tool's run against the campus.
	run := invocation{home: home, limit: time.Minute, args: []string{"run", "../plugins-official/wallet", "cardBalance", "--trust", "official", "--services", services}}.run(t)
	if run.code != 0 || !strings.Contains(run.stdout, `"balanceYuan"`) {
		t.Fatalf("run with the stored session: exit %d, stdout %s, stderr %s", run.code, run.stdout, run.stderr)
	}

	// A later login uses the kept TOTP secret: only the password is read.
	r = login(demoPassword+"\n", "card")
	if r.code != 0 || strings.Contains(r.stderr, "OTP code") || !strings.Contains(r.stdout, "card: logged in") {
		t.Fatalf("login with the kept TOTP secret: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}

	// logout forgets the sessions and keeps the TOTP secret.
	r = invocation{home: home, limit: time.Minute, args: []string{"logout"}}.run(t)
	if r.code != 0 || !strings.Contains(r.stdout, "forgot the sessions of card, portal, treehole, wproc, xiaobei") || !strings.Contains(r.stdout, "TOTP secret is kept") {
		t.Fatalf("logout: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	run = invocation{home: home, limit: time.Minute, args: []string{"run", "../plugins-official/wallet", "cardBalance", "--trust", "official", "--services", services}}.run(t)
	if run.code != 0 || !strings.Contains(run.stdout, "login_required") {
		t.Fatalf("run after logout: exit %d, stdout %s, stderr %s", run.code, run.stdout, run.stderr)
	}
	data, _ = os.ReadFile(ksPath)
	if !strings.Contains(string(data), demoTOTP) {
		t.Fatalf("plain logout forgot the TOTP secret")
	}
	r = invocation{home: home, limit: time.Minute, args: []string{"logout", "--forget-totp"}}.run(t)
	data, _ = os.ReadFile(ksPath)
	if r.code != 0 || strings.Contains(string(data), demoTOTP) || strings.Contains(string(data), `"login"`) {
		t.Fatalf("logout --forget-totp: exit %d, keystore %s", r.code, data)
	}
}
