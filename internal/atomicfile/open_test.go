//go:build unix

package atomicfile_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/atomicfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenRegularRefusesAtOnce: a named pipe (which a plain open waits on
// for a writer) and a device are refused without waiting; a regular file
// opens.
func TestOpenRegularRefusesAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	for path, refused := range map[string]bool{fifo: true, "/dev/null": true, file: false} {
		done := make(chan error, 1)
		go func() {
			f, err := atomicfile.OpenRegular(path)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if refused {
				assert.ErrorIs(t, err, atomicfile.ErrNotRegular, path)
			} else {
				assert.NoError(t, err, path)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("OpenRegular(%s) still waits", path)
		}
	}
}
