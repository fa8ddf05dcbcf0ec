package steps

import (
	"context"
	"sync"
	"time"
)

// A call has two deadlines: its own (the deadline limit) and its current
// request's (requestTimeout). Each is a context that one shared watcher
// cancels, looking at the clock every DeadlineTick while any is pending,
// rather than a timer of each run's and each request's own: the deadlines
// are seconds long, and a timer per context (its entry in the runtime's
// timer heap, stopping it) was a tenth of a short tool's time in the
// engine.

// DeadlineTick is how often the watcher looks at the clock: a deadline
// ends its context at most this much late.
const DeadlineTick = 10 * time.Millisecond

// WithDeadline returns a context that ends at now+d (DeadlineExceeded, as
// context.WithTimeout's does) or with parent, whichever comes first. When
// the parent ends first anyway, nothing watches it.
func WithDeadline(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithTimeout(parent, d) // already over
	}
	at := time.Now().Add(d)
	inner, cancel := context.WithCancelCause(parent)
	c := &deadlineCtx{Context: inner, cancel: cancel, at: at}
	if pd, ok := parent.Deadline(); ok && !pd.After(at) {
		c.at = pd
		return c, c.stop
	}
	c.watched = true
	watch.mu.Lock()
	if watch.set == nil {
		watch.set = map[*deadlineCtx]struct{}{}
	}
	watch.set[c] = struct{}{}
	if !watch.running {
		watch.running = true
		go watchLoop()
	}
	watch.mu.Unlock()
	return c, c.stop
}

// deadlineCtx is a context the watcher ends at its deadline.
type deadlineCtx struct {
	context.Context // context.WithCancelCause of the parent
	cancel          context.CancelCauseFunc
	at              time.Time
	watched         bool // the watcher ends it (else its parent does first)
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.at, true }

// Err is DeadlineExceeded once the deadline (its own, or an ancestor's of
// the same kind) ended it, as a context.WithTimeout's is.
func (c *deadlineCtx) Err() error {
	err := c.Context.Err()
	if err == context.Canceled && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

func (c *deadlineCtx) stop() {
	if c.watched {
		watch.mu.Lock()
		delete(watch.set, c)
		watch.mu.Unlock()
	}
	c.cancel(context.Canceled)
}

var watch struct {
	mu      sync.Mutex
	set     map[*deadlineCtx]struct{}
	running bool
}

// watchIdle is how many ticks the watcher waits with nothing pending
// before it stops: calls come one after another, and a new goroutine per
// call would cost what the timer did.
const watchIdle = 100

func watchLoop() {
	t := time.NewTicker(DeadlineTick)
	defer t.Stop()
	idle := 0
	for now := range t.C {
		watch.mu.Lock()
		if len(watch.set) == 0 {
			if idle++; idle >= watchIdle {
				watch.running = false
				watch.mu.Unlock()
				return
			}
		} else {
			idle = 0
		}
		for c := range watch.set {
			if !now.Before(c.at) {
				delete(watch.set, c)
				c.cancel(context.DeadlineExceeded)
			}
		}
		watch.mu.Unlock()
	}
}
