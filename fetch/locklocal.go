package fetch

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
)

// localLocks are the process's own locks of lock files, by absolute path,
// for systems without file locks (LockHome).
var localLocks sync.Map // string -> chan struct{} (capacity 1: held when full)

// lockLocal takes the process's own lock of path, waiting until ctx ends;
// the function it returns lets it go.
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
		return nil, fmt.Errorf("locking the home folder: %w", ctx.Err())
	}
}
