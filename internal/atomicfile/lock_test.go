package atomicfile

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The process's own lock (where the system has no file locks): one holder
// at a time per lock file, however it is named; a waiter gives up when its
// context ends; letting go twice lets go once.
func TestLockLocal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".lock")
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := path
			if i%2 == 1 {
				name = filepath.Join(dir, ".", ".lock")
			}
			unlock, err := lockLocal(context.Background(), name)
			if !assert.NoError(t, err) {
				return
			}
			n := inside.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			unlock()
			unlock()
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, most.Load(), "one holder at a time")

	unlock, err := lockLocal(context.Background(), path)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = lockLocal(ctx, path)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	unlock()
	unlock2, err := lockLocal(context.Background(), path)
	require.NoError(t, err)
	unlock2()
}

// Lock is a file lock: a second taker waits until the first lets go, and
// gives up with its context's error.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), path, time.Millisecond)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = Lock(ctx, path, time.Millisecond)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	unlock()
	unlock()
	unlock2, err := Lock(context.Background(), path, time.Millisecond)
	require.NoError(t, err)
	unlock2()
}
