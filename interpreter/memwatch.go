package interpreter

import (
	"context"

	"github.com/pkuinfo/harness/steps"
)

// The heap watch: jq programs can grow values step by step (`[range(1e9)]`,
// a reduce adding keys), each step interruptible but the whole unbounded in
// memory before the deadline. A call's context (steps.Frame.Begin) also
// bounds the process heap: the deadline watcher reads it every
// WatchInterval while calls run, and the call's jq programs read it every
// few thousand operations; above the heap limit every running call stops
// with a heapBytes LimitError, so the process survives.

// WatchInterval is how often the watcher reads the heap (and the clock).
const WatchInterval = steps.DeadlineTick

// WatchHeap watches the process heap for work outside a run (a test
// case's jq assertions, run with steps.JQ.Run1): the context is cancelled
// when the heap passes limit, stop ends the watch, and stopped reports
// whether the heap ended it.
func WatchHeap(ctx context.Context, limit int64) (watchCtx context.Context, stop func(), stopped func() bool) {
	if limit <= 0 {
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, func() bool { return false }
	}
	return steps.WatchHeap(ctx, limit)
}
