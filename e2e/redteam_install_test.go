package e2e

// An attacker's pass over loading documents: lint, hash, review, diff,
// install, update, accept, list and remove, driven through the real binary
// against a real git smart-HTTP server and loopback web servers. Each test
// names the attack and asserts what the engine must do about it.

import (
	"context"
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

// rtDoc is a valid front matter and body for id, with extra front-matter
// lines (each ending in "\n") and extra body text.
func rtDoc(id, version, extra, body string) string {
	return "---\nid: " + id + "\nname: Red team\ndescription: A document an attacker wrote.\nversion: " + version + "\n" + extra + "---\nInstructions.\n" + body
}

// rtTool is a read tool file.
const rtTool = "description: t\neffect: read\nsteps:\n  - return: '1'\n"

// harnessGuarded is harness with a guard: a run that does not end within
// limit is killed and fails the test (a hang is a defect; the limit is a
// guard, not an assertion about speed).
func harnessGuarded(t *testing.T, home string, env []string, limit time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HARNESS_HOME="+home, "NO_COLOR=1")
	cmd.Env = append(cmd.Env, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = strings.NewReader("")
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("harness %v did not end (killed after %v); stderr: %.2000s", args, limit, errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("harness %v: %v", args, err)
	}
	return result{code, out.String(), errb.String()}
}

// gitEnv points GitHub links at the test's git server.
func gitEnv(s *gittest.Server) []string { return []string{"HARNESS_GIT_BASE=" + s.Base()} }

// storeEmpty asserts that nothing was stored in home: no state entry, no
// store folder.
func storeEmpty(t *testing.T, home string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(home, "state.json")); err == nil {
		var st struct {
			Plugins map[string]json.RawMessage `json:"plugins"`
		}
		require.NoError(t, json.Unmarshal(b, &st))
		require.Empty(t, st.Plugins, "nothing may be installed")
	}
	des, _ := os.ReadDir(filepath.Join(home, "store"))
	require.Empty(t, des, "nothing may be stored")
}

// TestRedteamSharedTreeBomb: a git folder whose sub-folders all point to the
// same tree object, six levels deep. The pack is tiny (one tree per level),
// but walking it names 255^5 folders and 256 times as many files: the file
// and folder limits must stop the walk early, not the deadline or the
// machine's memory.
func TestRedteamSharedTreeBomb(t *testing.T) {
	t.Parallel()
	s := gittest.New(t)
	for _, filter := range []bool{true, false} {
		name := fmt.Sprintf("evil/bomb%v", filter)
		dir := s.Repo(name, filter)
		md := s.Blob(dir, rtDoc("bomb", "1.0.0", "", ""))
		x := s.Blob(dir, "x")
		var lines []string
		for i := 0; i < 256; i++ {
			lines = append(lines, fmt.Sprintf("100644 blob %s\tf%03d", x, i))
		}
		tree := s.Mktree(dir, lines...)
		for level := 0; level < 4; level++ {
			lines = lines[:0]
			for i := 0; i < 256; i++ {
				lines = append(lines, fmt.Sprintf("040000 tree %s\td%03d", tree, i))
			}
			tree = s.Mktree(dir, lines...)
		}
		lines = []string{"100644 blob " + md + "\tPLUGIN.md"}
		for i := 0; i < 255; i++ {
			lines = append(lines, fmt.Sprintf("040000 tree %s\ta%03d", tree, i))
		}
		top := s.Mktree(dir, lines...)
		s.CommitTree(dir, "main", s.Mktree(dir, "040000 tree "+top+"\tp"))

		home := t.TempDir()
		r := harnessGuarded(t, home, gitEnv(s), 40*time.Second, "install", "--yes", "https://github.com/"+name+"/tree/main/p")
		require.Equal(t, 1, r.code, r.stdout)
		require.Contains(t, r.stderr, "more than 256 files")
		storeEmpty(t, home)
	}
}
