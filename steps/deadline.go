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
// the parent ends first anyway, nothing watches it; when that parent is
// itself one of these, it is the context returned, with a cancel that does
// nothing (a request under a call whose deadline comes first needs no
// context of its own).
//
// Under one of these (a request under its call), the new context derives
// from what the parent derives from and stands under the parent in the
// watcher's books instead: the parent's ending (its cancel, its deadline,
// the heap watch) ends it with the parent's cause, as a context child
// would, and the parent's own parent ends it as a context child. That
// spares each request its registration among the call's context children
// (a map the context package allocates, and removes the entry from, per
// request).
func WithDeadline(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithTimeout(parent, d) // already over
	}
	at := time.Now().Add(d)
	up, _ := parent.(*deadlineCtx)
	if pd, ok := parent.Deadline(); ok && !pd.After(at) {
		if up != nil {
			return up, func() {}
		}
		inner, cancel := context.WithCancelCause(parent)
		c := &deadlineCtx{Context: inner, cancel: cancel, at: pd, base: parent}
		return c, c.stop
	}
	base := parent
	if up != nil {
		base = up.base
	}
	inner, cancel := context.WithCancelCause(base)
	c := &deadlineCtx{Context: inner, cancel: cancel, at: at, base: base, watched: true}
	watch.mu.Lock()
	if up != nil {
		if up.ended != nil {
			c.ended = up.ended
			cancel(up.ended)
		} else {
			c.up = up
			if up.kids == nil {
				up.kids = up.kid[:0] // one request at a time, mostly: no allocation
			}
			up.kids = append(up.kids, c)
		}
	}
	if watch.set == nil {
		watch.set = map[*deadlineCtx]struct{}{}
	}
	if c.ended == nil {
		watch.set[c] = struct{}{}
	}
	if !watch.running {
		watch.running = true
		go watchLoop()
	}
	watch.mu.Unlock()
	return c, c.stop
}

// deadlineCtx is a context the watcher ends at its deadline.
type deadlineCtx struct {
	context.Context // context.WithCancelCause of base
	cancel          context.CancelCauseFunc
	at              time.Time
	watched         bool            // the watcher ends it (else its parent does first)
	base            context.Context // the context it derives from

	// Under watch.mu:
	up    *deadlineCtx    // the one it stands under without deriving from it, or nil
	kids  []*deadlineCtx  // those standing under it
	kid   [1]*deadlineCtx // kids' first array
	ended error           // the cause it was ended with by end, or nil
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
	watch.mu.Lock()
	c.end(context.Canceled)
	watch.mu.Unlock()
}

// end cancels c and those standing under it with cause, and takes them out
// of the watcher's books. watch.mu is held.
func (c *deadlineCtx) end(cause error) {
	if c.watched {
		delete(watch.set, c)
	}
	if c.ended == nil {
		c.ended = cause
	}
	if up := c.up; up != nil {
		for i, k := range up.kids {
			if k == c {
				last := len(up.kids) - 1
				up.kids[i] = up.kids[last]
				up.kids[last] = nil
				up.kids = up.kids[:last]
				break
			}
		}
		c.up = nil
	}
	for len(c.kids) > 0 {
		c.kids[len(c.kids)-1].end(cause) // takes itself out of c.kids
	}
	c.cancel(cause)
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
				c.end(context.DeadlineExceeded)
			}
		}
		watch.mu.Unlock()
	}
}
