package steps

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The watcher's deadlines end their contexts as context.WithTimeout's do:
// DeadlineExceeded (for the context and what derives from it), a cancel
// is Canceled, and a parent that ends first needs no watching.
func TestWithDeadline(t *testing.T) {
	t0 := time.Now()
	ctx, cancel := WithDeadline(context.Background(), 50*time.Millisecond)
	t1 := time.Now()
	defer cancel()
	dl, ok := ctx.Deadline()
	require.True(t, ok)
	if dl.Before(t0.Add(50*time.Millisecond)) || dl.After(t1.Add(50*time.Millisecond)) {
		t.Fatalf("the deadline %v is not 50ms after the call (%v to %v)", dl, t0, t1)
	}
	child, ccancel := WithDeadline(ctx, time.Hour)
	defer ccancel()
	if d, _ := child.Deadline(); !d.Equal(dl) {
		t.Fatalf("a child's deadline is its parent's earlier one: %v, want %v", d, dl)
	}
	std, scancel := context.WithCancel(ctx)
	defer scancel()
	assert.NoError(t, ctx.Err())
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the deadline never ended the context")
	}
	took := time.Since(t0)
	assert.GreaterOrEqual(t, took, 50*time.Millisecond)
	assert.Less(t, took, 4*time.Second)
	assert.Equal(t, context.DeadlineExceeded, ctx.Err())
	<-child.Done()
	assert.Equal(t, context.DeadlineExceeded, child.Err(), "a child ends with its parent's deadline")
	<-std.Done()
	assert.True(t, errors.Is(context.Cause(std), context.DeadlineExceeded), "what derives from it sees the deadline as the cause")

	ctx2, cancel2 := WithDeadline(context.Background(), time.Hour)
	cancel2()
	assert.Equal(t, context.Canceled, ctx2.Err())
	watch.mu.Lock()
	pending := watch.pending(ctx2.(*deadlineCtx))
	watch.mu.Unlock()
	assert.False(t, pending, "a cancelled context is no longer watched")

	parent, pcancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer pcancel()
	ctx3, cancel3 := WithDeadline(parent, time.Hour)
	defer cancel3()
	assert.False(t, ctx3.(*deadlineCtx).watched, "an earlier parent deadline needs no watching")
	pd, _ := parent.Deadline()
	d3, _ := ctx3.Deadline()
	assert.Equal(t, pd, d3)
	<-ctx3.Done()
	assert.Equal(t, context.DeadlineExceeded, ctx3.Err())

	ctx4, cancel4 := WithDeadline(context.Background(), 0)
	defer cancel4()
	assert.Equal(t, context.DeadlineExceeded, ctx4.Err())
}

// A context under one of the watcher's with an earlier deadline (a request
// under its call) stands under it without deriving from it: it still ends
// as a context child would, with its parent's cancel (and its cause), its
// parent's deadline, and its parent's own parent; its own cancel leaves
// the parent running.
func TestWithDeadlineUnderParent(t *testing.T) {
	// The parent's cancel ends the child, Canceled.
	run, stop := WithDeadline(context.Background(), time.Hour)
	req, rcancel := WithDeadline(run, time.Minute)
	defer rcancel()
	assert.NotSame(t, run, req)
	d, _ := req.Deadline()
	assert.WithinDuration(t, time.Now().Add(time.Minute), d, 5*time.Second)
	std, scancel := context.WithCancel(req) // as net/http derives from it
	defer scancel()
	stop()
	select {
	case <-req.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the parent's cancel did not end the child")
	}
	assert.Equal(t, context.Canceled, req.Err())
	<-std.Done()
	watch.mu.Lock()
	pending := watch.pending(req.(*deadlineCtx))
	kids := len(run.(*deadlineCtx).kids)
	watch.mu.Unlock()
	assert.False(t, pending, "an ended child is no longer watched")
	assert.Zero(t, kids)

	// A child made after its parent ended is ended, with the parent's cause.
	late, lcancel := WithDeadline(run, time.Minute)
	defer lcancel()
	assert.Equal(t, context.Canceled, late.Err())

	// The child's cancel leaves the parent running; the child's own
	// deadline ends it alone, DeadlineExceeded.
	run2, stop2 := WithDeadline(context.Background(), time.Hour)
	defer stop2()
	req2, rcancel2 := WithDeadline(run2, time.Minute)
	rcancel2()
	assert.Equal(t, context.Canceled, req2.Err())
	assert.NoError(t, run2.Err())
	req3, rcancel3 := WithDeadline(run2, 30*time.Millisecond)
	defer rcancel3()
	<-req3.Done()
	assert.Equal(t, context.DeadlineExceeded, req3.Err())
	assert.NoError(t, run2.Err())
	watch.mu.Lock()
	kids = len(run2.(*deadlineCtx).kids)
	watch.mu.Unlock()
	assert.Zero(t, kids, "a child its deadline ended is out of its parent's books")

	// The parent's deadline ends the child, DeadlineExceeded.
	run3, stop3 := WithDeadline(context.Background(), 40*time.Millisecond)
	defer stop3()
	req4, rcancel4 := WithDeadline(run3, time.Hour)
	defer rcancel4()
	assert.Same(t, run3, req4, "a parent that ends first is the request's context")
	// Made before the parent's deadline passes; the parent ends it.
	run4, stop4 := WithDeadline(context.Background(), 60*time.Millisecond)
	defer stop4()
	req5, rcancel5 := WithDeadline(run4, 50*time.Millisecond)
	defer rcancel5()
	watch.mu.Lock()
	run4.(*deadlineCtx).at = time.Now() // the parent's deadline comes first after all
	watch.mu.Unlock()
	<-req5.Done()
	assert.Equal(t, context.DeadlineExceeded, req5.Err())
	assert.True(t, errors.Is(context.Cause(req5), context.DeadlineExceeded))

	// The parent's own parent ends the child as a context child.
	base, bcancel := context.WithCancelCause(context.Background())
	run5, stop5 := WithDeadline(base, time.Hour)
	defer stop5()
	req6, rcancel6 := WithDeadline(run5, time.Minute)
	defer rcancel6()
	cause := errors.New("the client went away")
	bcancel(cause)
	<-req6.Done()
	assert.Equal(t, context.Canceled, req6.Err())
	assert.Equal(t, cause, context.Cause(req6))
	<-run5.Done()
}

// A context the context package derives from one of these (as net/http
// does per request) registers through AfterFunc: the deadline ends it, and
// its own cancel takes its registration out again.
func TestDeadlineAfterFunc(t *testing.T) {
	run, stop := WithDeadline(context.Background(), time.Hour)
	defer stop()
	_, scancel := context.WithCancel(run)
	watch.mu.Lock()
	n := len(run.(*deadlineCtx).x.after)
	watch.mu.Unlock()
	assert.Equal(t, 1, n, "the derived context registered")
	scancel()
	watch.mu.Lock()
	n = len(run.(*deadlineCtx).x.after)
	watch.mu.Unlock()
	assert.Zero(t, n, "its cancel took the registration out")
	assert.NoError(t, run.Err())

	req, rcancel := WithDeadline(run, 20*time.Millisecond)
	defer rcancel()
	std2, scancel2 := context.WithCancel(req)
	defer scancel2()
	<-std2.Done()
	assert.Equal(t, context.DeadlineExceeded, std2.Err())
	assert.Equal(t, context.DeadlineExceeded, context.Cause(std2))
	assert.NoError(t, run.Err(), "a request's deadline leaves its call running")
	ran := make(chan struct{})
	context.AfterFunc(req, func() { close(ran) }) // already ended: runs at once
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("AfterFunc on an ended context never ran")
	}
}

// A frame's call context bounds the heap: past its limit it ends,
// Canceled, and the frame says the heap did it.
func TestFrameHeapStop(t *testing.T) {
	lim := DefaultLimits()
	lim.HeapBytes = 1 // any heap is over it
	f := &Frame{Limits: &lim}
	ctx := f.Begin(context.Background())
	defer f.Finish()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the heap watch never ended the call")
	}
	assert.Equal(t, context.Canceled, ctx.Err())
	assert.True(t, f.HeapStopped())
}
