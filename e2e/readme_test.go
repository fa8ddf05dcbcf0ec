package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestREADMEExamplesRun runs the README's examples as a reader would: every
// line of its ```sh blocks (with `go run ./cmd/harness` as the built
// command; `go test ./...` is this suite itself), in a fresh folder beside
// the repository's official documents, then each `harness run --campus …`
// command its prose names, with the exit the prose promises.
func TestREADMEExamplesRun(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	work := t.TempDir()
	abs, err := filepath.Abs("../plugins-official")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(work, "plugins-official")); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(work, "home")
	env := append(os.Environ(), "HARNESS_HOME="+home, "NO_COLOR=1", "HARNESS_GIT_BASE="+closedGitBase)

	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(text, -1)
	if len(blocks) < 2 {
		t.Fatalf("the README has %d sh blocks; want the run and the first-document ones", len(blocks))
	}
	ran := 0
	for _, b := range blocks {
		var lines []string
		for _, line := range strings.Split(b[1], "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "go test") {
				continue
			}
			lines = append(lines, line)
		}
		script := strings.Join(lines, "\n")
		if strings.TrimSpace(script) == "" {
			continue
		}
		script = strings.ReplaceAll(script, "go run ./cmd/harness", bin)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = work, env
		timer := time.AfterFunc(2*time.Minute, func() {
			if cmd.Process != nil {
				_ = cmd.Process.Kill()
			}
		})
		out, err := cmd.CombinedOutput()
		timer.Stop()
		if err != nil {
			t.Errorf("a README example failed: %v\n--- script\n%s\n--- output\n%s", err, script, out)
			continue
		}
		ran++
		if strings.Contains(script, "cardBalance") && !strings.Contains(string(out), `"balanceYuan"`) {
			t.Errorf("the README's first example should print the card balance; got %s", out)
		}
		if strings.Contains(script, "--ca site/cert.pem") && !strings.Contains(string(out), `"title":"校历调整的通知"`) {
			t.Errorf("the hello run against the local HTTPS server should print the newest notice; got %s", out)
		}
		if strings.Contains(script, "hash hello") && !regexp.MustCompile(`(?m)^h1:[A-Za-z0-9+/]{43}=$`).Match(out) {
			t.Errorf("the first-document example should print a content hash; got %s", out)
		}
	}
	if ran < 2 {
		t.Fatalf("ran %d README blocks", ran)
	}

	// The commands the prose names, in `…` spans (they may wrap a line).
	spans := regexp.MustCompile("`(harness run --campus [^`]+)`").FindAllStringSubmatch(text, -1)
	if len(spans) < 3 {
		t.Fatalf("the README names %d `harness run --campus` commands; want wallet, shuttle departures and book", len(spans))
	}
	type departure struct {
		Time   string `json:"time"`
		TimeID int    `json:"timeId"`
		State  string `json:"state"`
	}
	var departures struct {
		Departures []departure `json:"departures"`
	}
	for _, s := range spans {
		args := shellWords(t, strings.Join(strings.Fields(s[1]), " "))[1:]
		want := 0
		if strings.Contains(s[1], "book") {
			// The placeholders the prose asks the reader to fill in
			// from the departures it printed; refused (3) as an agent's
			// write without --approve, as the prose says.
			if len(departures.Departures) == 0 {
				t.Fatalf("the README books before it lists departures")
			}
			// The first one a reader could book, as a reader picks it
			// (the next run may be full or not open yet).
			i := slices.IndexFunc(departures.Departures, func(d departure) bool { return d.State == "bookable" })
			if i < 0 {
				t.Fatalf("no bookable departure among %+v", departures.Departures)
			}
			d := departures.Departures[i]
			for i, a := range args {
				a = strings.ReplaceAll(a, "YYYY-MM-DD", d.Time[:10])
				args[i] = regexp.MustCompile(`:N\b`).ReplaceAllString(a, ":"+itoa(d.TimeID))
			}
			want = 3
		}
		r := invocation{home: home, args: args, limit: time.Minute}.run(t)
		if r.code != want {
			t.Errorf("harness %v: exit %d, want %d; stderr: %s", args, r.code, want, r.stderr)
			continue
		}
		if strings.Contains(s[1], "departures") {
			if err := json.Unmarshal([]byte(r.stdout), &departures); err != nil {
				t.Fatalf("departures: %v: %s", err, r.stdout)
			}
		}
		if want == 3 {
			ok := invocation{home: home, args: append(args, "--approve"), limit: time.Minute}.run(t)
			if ok.code != 0 || !strings.Contains(ok.stdout, "{") {
				t.Errorf("with --approve the booking should run (exit 0); exit %d: %s %s", ok.code, ok.stdout, ok.stderr)
			}
		}
	}
}

// shellWords splits a command line as the shell would for the README's
// spans: spaces separate words, '…' quotes.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
			in = true
		case r == ' ' && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
