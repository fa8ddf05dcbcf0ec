package cli

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// syncBuffer is a bytes.Buffer safe to read while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCampusCommandServesUntilStopped(t *testing.T) {
	dir := t.TempDir()
	addr, svcPath, secPath := filepath.Join(dir, "addr"), filepath.Join(dir, "services.yaml"), filepath.Join(dir, "secrets.yaml")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old := campusSignals
	campusSignals = func(context.Context) (context.Context, context.CancelFunc) { return ctx, cancel }
	defer func() { campusSignals = old }()

	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	env := map[string]string{"HARNESS_NOW": "2026-04-15T12:30:00+08:00"}
	go func() {
		done <- Main([]string{"campus", "--addr-file", addr, "--services-out", svcPath, "--secrets-out", secPath, "--expired", "xiaobei"},
			strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	}()
	// The address file appears once the campus serves.
	var lines []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		if b, err := os.ReadFile(addr); err == nil {
			lines = b
			break
		}
		select {
		case code := <-done:
			t.Fatalf("campus exited with %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no address file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	origins := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		name, origin, _ := strings.Cut(l, " ")
		origins[name] = origin
	}
	// The seven services and the IAAA (which harness login reaches).
	if len(origins) != 8 || !strings.HasPrefix(origins["card"], "http://127.0.0.1:") || !strings.HasPrefix(origins["iaaa"], "http://127.0.0.1:") {
		t.Fatalf("address file %q", lines)
	}

	// The files have the contract shapes; the secrets file is private.
	if st, err := os.Stat(secPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secrets file: %v %v", st.Mode(), err)
	}
	var svcs map[string]struct {
		Origin string `yaml:"origin"`
	}
	b, _ := os.ReadFile(svcPath)
	if err := yaml.Unmarshal(b, &svcs); err != nil || svcs["card"].Origin != origins["card"] {
		t.Fatalf("services file %s: %v", b, err)
	}
	var secs map[string]struct {
		Cookies map[string]string `yaml:"cookies"`
		Headers map[string]string `yaml:"headers"`
	}
	b, _ = os.ReadFile(secPath)
	if err := yaml.Unmarshal(b, &secs); err != nil {
		t.Fatal(err)
	}
	token := secs["card"].Headers["synjones-auth"]

	// The session from the secrets file gets data; the clock is HARNESS_NOW.
	req, _ := http.NewRequest("GET", origins["card"]+"/berserker-app/ykt/tsm/queryCard?synAccessSource=h5", nil)
	req.Header.Set("synjones-auth", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("card with the printed session: %d", resp.StatusCode)
	}
	// --expired xiaobei holds.
	req, _ = http.NewRequest("GET", origins["xiaobei"]+"/api/api_activity?event_type=lecture", nil)
	for k, v := range secs["xiaobei"].Cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("expired xiaobei: %d", resp.StatusCode)
	}

	out := stdout.String()
	if !strings.Contains(out, svcPath) || !strings.Contains(out, secPath) || !strings.Contains(out, origins["treehole"]) {
		t.Errorf("stdout lacks the paths or origins:\n%s", out)
	}
	for _, s := range secs {
		for _, v := range s.Cookies {
			if strings.Contains(out+stderr.String(), v) {
				t.Error("a session value was printed")
			}
		}
		for _, v := range s.Headers {
			if strings.Contains(out+stderr.String(), v) {
				t.Error("a session value was printed")
			}
		}
	}

	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if resp, err := http.Get(origins["canteen"] + "/api/crowd"); err == nil {
		resp.Body.Close()
		t.Error("the campus still serves after stopping")
	}
}

func TestCampusCommandRejectsUnknownService(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main([]string{"campus", "--expired", "nope"}, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" })
	if code != ExitUsage || !strings.Contains(stderr.String(), "nope") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
