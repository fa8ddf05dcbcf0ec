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
	_, pending := watch.set[ctx2.(*deadlineCtx)]
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
