//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlagFilesThatAreNotFilesAreRefused: every flag that names a file the
// command reads (mcp's --token-file, --ca, --services, --secrets) refuses
// a named pipe at once, and a device (opening a pipe waits for a writer,
// a device never ends), with an error naming the file; the command never
// waits on it.
func TestFlagFilesThatAreNotFilesAreRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	wallet := "../../plugins-official/wallet"
	cases := [][]string{
		{"mcp", "--http", "127.0.0.1:0", "--token-file", "FILE"},
		{"mcp", "--resolve", "news.example.edu.cn:443:127.0.0.1:9", "--ca", "FILE"},
		{"run", "--resolve", "news.example.edu.cn:443:127.0.0.1:9", "--ca", "FILE", wallet, "cardBalance"},
		{"login", "--user", "2100012345", "--resolve", "iaaa.pku.edu.cn:443:127.0.0.1:9", "--ca", "FILE", "portal"},
		{"mcp", "--services", "FILE"},
		{"mcp", "--secrets", "FILE"},
		{"run", "--services", "FILE", wallet, "cardBalance"},
		{"run", "--secrets", "FILE", wallet, "cardBalance"},
	}
	for _, file := range []string{fifo, "/dev/zero"} {
		for _, c := range cases {
			args := make([]string, len(c))
			for i, a := range c {
				args[i] = strings.ReplaceAll(a, "FILE", file)
			}
			name := strings.Join(args, " ")
			type result struct {
				code int
				errs string
			}
			done := make(chan result, 1)
			go func() {
				code, _, errs := runCLI(t, map[string]string{"HARNESS_HOME": t.TempDir()}, args...)
				done <- result{code, errs}
			}()
			select {
			case r := <-done:
				assert.NotEqual(t, 0, r.code, name)
				assert.Contains(t, r.errs, file, name)
				assert.Contains(t, r.errs, "not a regular file", name)
			case <-time.After(10 * time.Second):
				// Unblock the open so that the test ends.
				if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					w.Close()
				}
				<-done
				t.Errorf("%s: waited on the file", name)
			}
		}
	}
}
