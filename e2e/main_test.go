package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	// The binary is built from these packages: linking them into the test
	// makes go test's cache see every change to them, so a cached pass
	// never hides a change to the command.
	_ "github.com/pkuinfo/harness/internal/cli"
)

// bin is the harness binary built for this run.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "harness-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "bin", "harness")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	// The contract's build: from the repository root, no other step.
	build := exec.Command("go", "build", "-o", bin, "./cmd/harness")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "the contract's build failed: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
}

// invocation is one run of the binary: its working folder (empty: the
// test's), its home, variables added to the environment, and a limit (0:
// none) after which a run that hangs is killed and fails the test (a guard,
// not an assertion about speed).
type invocation struct {
	dir, home string
	env       []string
	limit     time.Duration
	args      []string
	stdin     string // what the run reads on stdin (empty: nothing)
}

func (in invocation) run(t *testing.T) result {
	t.Helper()
	ctx := context.Background()
	if in.limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.limit)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, bin, in.args...)
	cmd.Dir = in.dir
	cmd.Env = append(os.Environ(), "HARNESS_HOME="+in.home, "NO_COLOR=1", "HARNESS_GIT_BASE="+closedGitBase)
	cmd.Env = append(cmd.Env, in.env...) // the later value of a name wins

	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = strings.NewReader(in.stdin)
	err := cmd.Run()
	if in.limit > 0 && ctx.Err() != nil {
		t.Fatalf("harness %v did not end (killed after %v); stderr: %.2000s", in.args, in.limit, errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("harness %v: %v", in.args, err)
	}
	return result{code, out.String(), errb.String()}
}

// closedGitBase is the HARNESS_GIT_BASE every run gets unless its env gives
// one: a loopback port nothing listens on (binding port 1 takes root), so a
// GitHub link no test serves (a bundled document's, checked by harness
// update) fails at once on loopback and never reaches github.com.
const closedGitBase = "http://127.0.0.1:1"

// harness runs the binary with args; env adds variables (HARNESS_HOME is
// always set, to the test's own folder, and HARNESS_GIT_BASE to
// closedGitBase, unless env sets them).
func harness(t *testing.T, home string, env []string, args ...string) result {
	t.Helper()
	return invocation{home: home, env: env, args: args}.run(t)
}

// writeFiles writes a document (path -> text) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
