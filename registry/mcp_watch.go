package registry

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// WatchOptions configure MCPService.Watch.
type WatchOptions struct {
	// Paths are the files whose change means the home changed: the
	// install state (state.json: installs, updates, accepts, removals,
	// enabling, the modes of installed documents) and permissions.json
	// (the modes and enabling of bundled and native plugins).
	Paths []string
	// Every is the polling interval (DefaultWatchEvery when 0).
	Every time.Duration
	// Reopen builds the registry of the home as it is now.
	Reopen func(context.Context) (*Registry, error)
	// OnError hears a home that changed but could not be opened; the
	// tools served stay as they were. Nil drops it.
	OnError func(error)
	// OnRefresh hears each registry served after a change, once its
	// catalogue is served (with the problems Refresh noted in it). Nil
	// drops it.
	OnRefresh func(*Registry)
}

// DefaultWatchEvery is WatchOptions.Every's default.
const DefaultWatchEvery = 500 * time.Millisecond

// maxWatchedBytes bounds what is read of one watched file for its
// fingerprint; the home's state files are far smaller.
const maxWatchedBytes = 64 << 20

// Watch polls the paths until ctx ends. When one changes (another process
// installed, updated, removed, enabled or disabled a document, or changed
// a mode), it reopens the registry and serves its catalogue (Refresh), so
// sessions are told the list changed and new tools can be called at once.
// A change is seen by size, modification time and content hash, so a
// rewrite within the same second is not missed.
func (s *MCPService) Watch(ctx context.Context, o WatchOptions) {
	if o.Reopen == nil {
		return
	}
	if o.Every <= 0 {
		o.Every = DefaultWatchEvery
	}
	last := fingerprint(o.Paths)
	tick := time.NewTicker(o.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := fingerprint(o.Paths)
		if now == last {
			continue
		}
		r, err := o.Reopen(ctx)
		if err == nil {
			err = s.Refresh(r)
		}
		if err == nil && o.OnRefresh != nil {
			o.OnRefresh(r)
		}
		if err != nil {
			if o.OnError != nil {
				o.OnError(fmt.Errorf("the home changed but cannot be read; the tools served stay as they were: %w", err))
			}
			// try again at the next change, not at every tick
		}
		last = now
	}
}

// fingerprint sums the files' state: absent, or size, time and content.
func fingerprint(paths []string) [32]byte {
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00", p)
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(h, "absent\x00")
			} else {
				fmt.Fprintf(h, "error %v\x00", err)
			}
			continue
		}
		fmt.Fprintf(h, "%d %d\x00", st.Size(), st.ModTime().UnixNano())
		if f, err := os.Open(p); err == nil {
			_, _ = io.Copy(h, io.LimitReader(f, maxWatchedBytes))
			f.Close()
		}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}
