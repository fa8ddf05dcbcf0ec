//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddRemoteRefusesATokenFileThatIsNotAFile: a named pipe as
// --token-file is refused at once (opening one waits for a writer), and so
// is a device; nothing is stored and the server is never asked.
func TestAddRemoteRefusesATokenFileThatIsNotAFile(t *testing.T) {
	srv := mcptest.Canteen(t, "")
	fifo := filepath.Join(t.TempDir(), "token")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, f := range []string{fifo, "/dev/zero"} {
		home := t.TempDir()
		type result struct {
			code      int
			out, errs string
		}
		done := make(chan result, 1)
		go func() {
			code, out, errs := runCLI(t, map[string]string{"HARNESS_HOME": home}, "add-remote", srv.URL, "--token-file", f, "--yes")
			done <- result{code, out, errs}
		}()
		select {
		case r := <-done:
			assert.Equal(t, 1, r.code, f)
			assert.Contains(t, r.errs, "not a regular file", f)
		case <-time.After(5 * time.Second):
			// Unblock the open so the test ends.
			if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				w.Close()
			}
			<-done
			t.Fatalf("add-remote waited on %s", f)
		}
		_, err := os.Stat(filepath.Join(home, "remote.json"))
		assert.True(t, os.IsNotExist(err), f)
	}
	assert.Empty(t, srv.Auths(), "the server was never asked")
}
