package steps

import (
	"context"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// A call has two deadlines, its own (the deadline limit) and its current
// request's (requestTimeout), and a bound on the process heap (heapBytes).
// Each deadline is a context of this file's own kind, which one shared
// watcher ends, looking at the clock every DeadlineTick while any is
// pending, rather than a timer of each run's and each request's own: the
// deadlines are seconds long, and a timer per context (its entry in the
// runtime's timer heap, stopping it) was a tenth of a short tool's time in
// the engine. The same watcher samples the heap for the contexts that bound
// it, and a call's jq programs read it themselves every heapCheckOps
// operations (jqWatch), so a program growing a value fast is stopped near
// the limit rather than one tick past it.
//
// The contexts are not the context package's: a call's context lives inside
// the call's frame (no allocation), a request's is one allocation, and
// neither registers among its parent's children when the parent is one of
// these. A context derived from one of them with the context package (as
// net/http derives one per request) registers through AfterFunc.

// DeadlineTick is how often the watcher looks at the clock and the heap: a
// deadline ends its context at most this much late.
const DeadlineTick = 10 * time.Millisecond

// heapCheckOps is how many jq operations a call's programs run between
// two readings of the heap (one reading costs about 300 ns, 4096
// operations at least 40 µs).
const heapCheckOps = 4096

// WithDeadline returns a context that ends at now+d (DeadlineExceeded, as
// context.WithTimeout's does) or with parent, whichever comes first. When
// the parent ends first anyway, nothing watches it; when that parent is
// itself one of these, it is the context returned, with a cancel that does
// nothing (a request under a call whose deadline comes first needs no
// context of its own).
//
// Under one of these (a request under its call), the new context stands
// under the parent in the watcher's books: the parent's ending (its cancel,
// its deadline, the heap watch, its own parent) ends it, with the same
// error, as a context child would, without an entry among the context
// package's children (a map allocated, entered and left per request).
func WithDeadline(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithTimeout(parent, d) // already over
	}
	ctx, own := bounded(parent, d)
	if own == nil {
		return ctx, func() {}
	}
	return ctx, own.stop
}

// bounded is WithDeadline for the engine's own use: the context, and the
// one to stop when done with it (nil when it is parent itself). A cancel
// function would be one allocation more.
func bounded(parent context.Context, d time.Duration) (context.Context, *deadlineCtx) {
	d = max(d, 0)
	if up, ok := parent.(*deadlineCtx); ok && up.hasAt && !up.at.After(now().Add(d)) {
		return up, nil
	}
	c := newCtx()
	c.start(parent, d, 0)
	return c, c
}

// newCtx is a context of its own allocation, its rarely used part with
// it (a request's: net/http registers through AfterFunc on each).
func newCtx() *deadlineCtx {
	r := &struct {
		deadlineCtx
		x ctxExtra
	}{}
	r.x.after = r.x.after1[:0]
	r.deadlineCtx.x = &r.x
	return &r.deadlineCtx
}

// epoch is the monotonic clock's origin for now.
var epoch = time.Now()

// now is time.Now as far as deadlines care: its monotonic reading is the
// clock's (time.Since reads only that clock, where time.Now reads the
// wall clock too, a second clock read per call), and its wall reading is
// epoch's advanced by as much, which differs from the wall clock only when
// that was set since the process started. A deadline is compared and
// subtracted (time.Until, net/http's dialer) by its monotonic reading.
func now() time.Time { return epoch.Add(time.Since(epoch)) }

// release stops c when it is not nil (bounded's second result).
func (c *deadlineCtx) release() {
	if c != nil {
		c.stop()
	}
}

// WatchHeap returns a context that ends (Canceled) when the process heap
// passes limit, or with parent; stop ends it, and heapStopped reports
// whether the heap did. It is for work outside a call (a test case's jq
// assertions), whose jq programs Run1 checks as a call's are checked.
func WatchHeap(parent context.Context, limit int64) (ctx context.Context, stop func(), heapStopped func() bool) {
	c := newCtx()
	c.start(parent, -1, limit)
	return c, c.stop, c.heapStopped.Load
}

// deadlineCtx is a context the watcher ends at its deadline, or when the
// heap passes its limit.
//
// A call's context lives in its run's one allocation, which the engine
// keeps small (at most 512 bytes: the allocator's size without a header):
// what most calls never use is in ctxExtra, made when first needed.
type deadlineCtx struct {
	parent      context.Context // Value's, and the ending's unless up is set
	at          time.Time       // the deadline, when hasAt
	hasAt       bool            // false: the parent's deadline (a heap watch alone)
	watched     bool            // the watcher ends it at at (else its parent ends first)
	foreign     bool            // parent is another kind of context, which can end: hooked by AfterFunc
	ended       bool            // under watch.mu
	heapStopped atomic.Bool     // the heap ended it
	heap        int64           // the heap limit; 0: none

	done atomic.Value          // chan struct{}, made when first asked for
	err  atomic.Pointer[error] // once ended

	// Under watch.mu:
	up         *deadlineCtx    // its parent, when that is one of these
	kids       []*deadlineCtx  // those standing under it
	kid        [1]*deadlineCtx // kids' first array
	prev, next *deadlineCtx    // its neighbours in the watcher's list, while in it
	x          *ctxExtra       // nil until needed
}

// ctxExtra is what a context needs only when another kind of context
// derives from it or is its parent. Under watch.mu.
type ctxExtra struct {
	unhook func() bool  // the AfterFunc on a foreign parent
	after  []afterFunc  // AfterFunc's registrations
	after1 [1]afterFunc // after's first array
	seq    uint64       // the last registration's number
}

// extra returns c.x, made when c has none. watch.mu is held.
func (c *deadlineCtx) extra() *ctxExtra {
	if c.x == nil {
		c.x = &ctxExtra{}
		c.x.after = c.x.after1[:0]
	}
	return c.x
}

// errs are the errors ending a context most often, as err holds them (an
// error of another kind is one allocation).
var (
	errCanceled = context.Canceled
	errDeadline = context.DeadlineExceeded
)

func errRef(err error) *error {
	switch err {
	case context.Canceled:
		return &errCanceled
	case context.DeadlineExceeded:
		return &errDeadline
	}
	e := err // a copy here: taking err's address would move it to the heap on every path
	return &e
}

type afterFunc struct {
	id uint64
	f  func()
}

// start sets c up under parent: its deadline d from now (d < 0: none), its
// heap limit (0: none).
func (c *deadlineCtx) start(parent context.Context, d time.Duration, heap int64) {
	c.parent, c.heap = parent, heap
	if d >= 0 {
		c.at, c.hasAt, c.watched = now().Add(d), true, true
	}
	if pd, ok := parent.Deadline(); ok && (!c.hasAt || !pd.After(c.at)) {
		c.at, c.hasAt, c.watched = pd, true, false
	}
	up, _ := parent.(*deadlineCtx)
	var pdone <-chan struct{}
	if up == nil {
		pdone = parent.Done()
		c.foreign = pdone != nil
	}
	var fire firing
	watch.mu.Lock()
	switch {
	case d == 0:
		c.end(context.DeadlineExceeded, &fire)
	case up != nil && up.ended:
		c.end(up.Err(), &fire)
	case up != nil:
		c.up = up
		if up.kids == nil {
			up.kids = up.kid[:0] // one request at a time, mostly: no allocation
		}
		up.kids = append(up.kids, c)
	}
	if !c.ended && (c.watched || c.heap > 0) {
		watch.add(c)
		if !watch.running {
			watch.running = true
			go watchLoop()
		}
	}
	watch.mu.Unlock()
	fire.run()
	if c.foreign {
		select {
		case <-pdone:
			c.parentEnded()
		default:
			unhook := context.AfterFunc(parent, c.parentEnded)
			watch.mu.Lock()
			ended := c.ended
			if !ended {
				c.extra().unhook = unhook
			}
			watch.mu.Unlock()
			if ended {
				unhook()
			}
		}
	}
}

func (c *deadlineCtx) Deadline() (time.Time, bool) {
	if !c.hasAt {
		return c.parent.Deadline()
	}
	return c.at, true
}

func (c *deadlineCtx) Value(key any) any { return c.parent.Value(key) }

// Err is DeadlineExceeded once the deadline (its own, or an ancestor's)
// ended it, as a context.WithTimeout's is, Canceled once a cancel or the
// heap did, and the parent's error once the parent ended.
func (c *deadlineCtx) Err() error {
	if e := c.err.Load(); e != nil {
		return *e
	}
	if c.foreign {
		return c.parent.Err() // the AfterFunc may not have run yet
	}
	return nil
}

// closedchan is the Done of a context ended before anyone asked for it.
var closedchan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

func (c *deadlineCtx) Done() <-chan struct{} {
	if d, ok := c.done.Load().(chan struct{}); ok {
		return d
	}
	watch.mu.Lock()
	defer watch.mu.Unlock()
	if d, ok := c.done.Load().(chan struct{}); ok {
		return d
	}
	d := closedchan
	if !c.ended {
		d = make(chan struct{})
	}
	c.done.Store(d)
	return d
}

// AfterFunc implements the context package's afterFuncer: a context it
// derives from this one (net/http's per request) is ended by f. f runs
// when c ends, outside the watcher's lock, in the goroutine that ends c:
// the context package's f only cancels its context (context.AfterFunc's
// own f is started in a goroutine of its own by that context).
func (c *deadlineCtx) AfterFunc(f func()) func() bool {
	watch.mu.Lock()
	if c.ended {
		watch.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	x := c.extra()
	x.seq++
	id := x.seq
	x.after = append(x.after, afterFunc{id: id, f: f})
	watch.mu.Unlock()
	return func() bool {
		watch.mu.Lock()
		defer watch.mu.Unlock()
		for i, a := range x.after {
			if a.id == id {
				last := len(x.after) - 1
				x.after[i] = x.after[last]
				x.after[last] = afterFunc{}
				x.after = x.after[:last]
				return true
			}
		}
		return false
	}
}

func (c *deadlineCtx) stop() {
	var fire firing
	watch.mu.Lock()
	c.end(context.Canceled, &fire)
	watch.mu.Unlock()
	fire.run()
}

// parentEnded ends c with its foreign parent's error.
func (c *deadlineCtx) parentEnded() {
	err := c.parent.Err()
	if err == nil {
		err = context.Canceled
	}
	var fire firing
	watch.mu.Lock()
	c.end(err, &fire)
	watch.mu.Unlock()
	fire.run()
}

// firing collects, while watch.mu is held, what an ending leaves to run
// once it is released: the AfterFunc registrations of the contexts it
// ended, and their hooks on foreign parents.
type firing struct {
	n    int
	buf  [2]fireEntry
	more []fireEntry
}

type fireEntry struct {
	after  []afterFunc
	unhook func() bool
}

func (fi *firing) add(e fireEntry) {
	if fi.n < len(fi.buf) {
		fi.buf[fi.n] = e
		fi.n++
		return
	}
	fi.more = append(fi.more, e)
}

func (fi *firing) run() {
	for _, e := range fi.buf[:fi.n] {
		e.fire()
	}
	for _, e := range fi.more {
		e.fire()
	}
}

func (e fireEntry) fire() {
	for _, a := range e.after {
		a.f()
	}
	if e.unhook != nil {
		e.unhook()
	}
}

// end ends c and those standing under it with err, and takes them out of
// the watcher's books. watch.mu is held.
func (c *deadlineCtx) end(err error, fire *firing) {
	if c.ended {
		return
	}
	c.ended = true
	c.err.Store(errRef(err))
	if d, ok := c.done.Load().(chan struct{}); ok && d != closedchan {
		close(d)
	}
	watch.remove(c)
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
		c.kids[len(c.kids)-1].end(err, fire) // takes itself out of c.kids
	}
	if x := c.x; x != nil && (len(x.after) > 0 || x.unhook != nil) {
		fire.add(fireEntry{after: x.after, unhook: x.unhook})
		x.after, x.unhook = nil, nil
	}
}

// watch is the watcher's books: the pending contexts it ends at their
// deadlines or over their heap limits, a list through the contexts
// themselves (entering and leaving it writes a few pointers, where a map
// hashed and probed per call).
var watch watcher

type watcher struct {
	mu      sync.Mutex
	head    *deadlineCtx // the list of pending contexts
	n       int          // its length
	running bool
}

// add enters c in the list. mu is held.
func (w *watcher) add(c *deadlineCtx) {
	c.prev, c.next = nil, w.head
	if w.head != nil {
		w.head.prev = c
	}
	w.head = c
	w.n++
}

// remove takes c out of the list when it is in it. mu is held.
func (w *watcher) remove(c *deadlineCtx) {
	if !w.pending(c) {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		w.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	}
	c.prev, c.next = nil, nil
	w.n--
}

// pending reports whether c is in the list. mu is held.
func (w *watcher) pending(c *deadlineCtx) bool { return c.prev != nil || w.head == c }

// endEach ends, with err, every pending context for which over holds
// (collected first: an ending takes contexts out of the list). mu is held.
func (w *watcher) endEach(over func(c *deadlineCtx) bool, err error, fire *firing) {
	var buf [8]*deadlineCtx
	ends := buf[:0]
	for c := w.head; c != nil; c = c.next {
		if over(c) {
			ends = append(ends, c)
		}
	}
	for _, c := range ends {
		c.end(err, fire)
	}
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
		var fire firing
		watch.mu.Lock()
		if watch.n == 0 {
			if idle++; idle >= watchIdle {
				watch.running = false
				watch.mu.Unlock()
				return
			}
		} else {
			idle = 0
		}
		heap := int64(-1)
		watch.endEach(func(c *deadlineCtx) bool {
			if c.watched && !now.Before(c.at) {
				return true
			}
			if c.heap > 0 && heap < 0 {
				heap = readHeap()
			}
			return false
		}, context.DeadlineExceeded, &fire)
		if heap >= 0 {
			stopOverHeap(heap, &fire)
		}
		watch.mu.Unlock()
		fire.run()
	}
}

// stopOverHeap ends every pending context whose heap limit heap passes.
// watch.mu is held.
func stopOverHeap(heap int64, fire *firing) {
	watch.endEach(func(c *deadlineCtx) bool {
		if c.heap > 0 && heap > c.heap {
			c.heapStopped.Store(true)
			return true
		}
		return false
	}, context.Canceled, fire)
}

var heapSample = sync.Pool{New: func() any {
	return &[1]metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
}}

// readHeap reads the process heap: the bytes of its objects, live or not
// yet swept.
func readHeap() int64 {
	s := heapSample.Get().(*[1]metrics.Sample)
	metrics.Read(s[:])
	heap := int64(s[0].Value.Uint64())
	heapSample.Put(s)
	return heap
}

// checkHeap reads the heap for c (a call whose jq programs ran
// heapCheckOps operations since the last reading) and, past c's limit,
// ends every call it passes the limit of, as the watcher would at its next
// tick.
func (c *deadlineCtx) checkHeap() {
	if c.heap <= 0 {
		return
	}
	heap := readHeap()
	if heap <= c.heap {
		return
	}
	var fire firing
	watch.mu.Lock()
	stopOverHeap(heap, &fire)
	watch.mu.Unlock()
	fire.run()
}
