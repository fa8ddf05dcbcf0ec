package interpreter

import (
	"context"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// The heap watch: jq programs can grow values step by step (`[range(1e9)]`,
// a reduce adding keys), each step interruptible but the whole unbounded in
// memory before the deadline. While runs are active, one goroutine samples
// the process heap every WatchInterval; above the heap limit it stops every
// active run with a heapBytes LimitError, so the process survives.

// WatchInterval is how often the heap watch samples the heap.
const WatchInterval = 20 * time.Millisecond

type watched struct {
	cancel  context.CancelFunc
	limit   int64
	stopped atomic.Bool
}

var heapWatch struct {
	mu      sync.Mutex
	runs    map[*watched]struct{}
	running bool
}

// watchHeap registers a run until unwatchHeap.
func watchHeap(w *watched) {
	if w.limit <= 0 {
		return
	}
	heapWatch.mu.Lock()
	if heapWatch.runs == nil {
		heapWatch.runs = map[*watched]struct{}{}
	}
	heapWatch.runs[w] = struct{}{}
	if !heapWatch.running {
		heapWatch.running = true
		go heapLoop()
	}
	heapWatch.mu.Unlock()
}

// WatchHeap watches the process heap for work outside a run (a test
// case's jq assertions): the context is cancelled when the heap passes
// limit, stop ends the watch, and stopped reports whether the heap ended it.
func WatchHeap(ctx context.Context, limit int64) (watchCtx context.Context, stop func(), stopped func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watched{cancel: cancel, limit: limit}
	watchHeap(w)
	return ctx, func() { unwatchHeap(w); cancel() }, w.stopped.Load
}

func unwatchHeap(w *watched) {
	if w.limit <= 0 {
		return
	}
	heapWatch.mu.Lock()
	delete(heapWatch.runs, w)
	heapWatch.mu.Unlock()
}

func heapLoop() {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	t := time.NewTicker(WatchInterval)
	defer t.Stop()
	for range t.C {
		heapWatch.mu.Lock()
		if len(heapWatch.runs) == 0 {
			heapWatch.running = false
			heapWatch.mu.Unlock()
			return
		}
		metrics.Read(sample)
		heap := int64(sample[0].Value.Uint64())
		for w := range heapWatch.runs {
			if heap > w.limit {
				w.stopped.Store(true)
				w.cancel()
				delete(heapWatch.runs, w)
			}
		}
		heapWatch.mu.Unlock()
	}
}
