package atomicfile

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// Lock takes the lock file path (made when missing), trying every poll
// until ctx ends (the error is then ctx's); the function it returns lets it
// go, once however often it is called. Every store of the home changes its
// files under such a lock. Where the system has no file locks (wasip1, js:
// the lock answers errors.ErrUnsupported) the lock is this process's own
// (lockLocal): its goroutines still take turns, and another process
// sharing the folder is not kept out, which such a system's single host
// process does not need.
func Lock(ctx context.Context, path string, poll time.Duration) (func(), error) {
	fl := flock.New(path)
	ok, err := fl.TryLockContext(ctx, poll)
	if errors.Is(err, errors.ErrUnsupported) {
		return lockLocal(ctx, path)
	}
	if err != nil || !ok {
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { _ = fl.Unlock() }) }, nil
}

// localLocks are the process's own locks of lock files, by absolute path,
// for systems without file locks.
var localLocks sync.Map // string -> chan struct{} (capacity 1: held when full)

// lockLocal takes the process's own lock of path, waiting until ctx ends.
func lockLocal(ctx context.Context, path string) (func(), error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	v, _ := localLocks.LoadOrStore(path, make(chan struct{}, 1))
	ch := v.(chan struct{})
	select {
	case ch <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-ch }) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
