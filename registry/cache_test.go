package registry_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestDataSourceCache: many concurrent readers of one source cause one
// fetch; the value lives for the source's TTL. Run with -race.
func TestDataSourceCache(t *testing.T) {
	var fetches atomic.Int32
	release := make(chan struct{})
	clk := &fakeClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	r := registry.New(registry.WithClock(clk.Now), registry.WithCompiler(func(p *manifest.Plugin) (registry.Runner, error) {
		return registry.RunnerFunc(func(ctx context.Context, req registry.RunRequest) (any, error) {
			n := fetches.Add(1)
			<-release
			return map[string]any{"fetch": n, "q": req.Input["q"], "actor": string(req.Actor)}, nil
		}), nil
	}))
	mustAdd(t, r, docFiles("canteen", "dataSources:\n  - { name: crowd, tool: crowd, input: { q: main }, ttl: 60 }\n",
		map[string]string{"crowd": toolYAML("read")}), registry.Official, registry.DocOptions{})

	const readers = 64
	var wg sync.WaitGroup
	results := make([]*registry.Envelope, readers)
	var started sync.WaitGroup
	started.Add(readers)
	for i := 0; i < readers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			env, err := r.ReadSource(context.Background(), "canteen.crowd")
			assert.NoError(t, err)
			results[i] = env
		}()
	}
	started.Wait()
	for fetches.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	assert.Equal(t, int32(1), fetches.Load())
	for _, env := range results {
		require.NotNil(t, env)
		assert.Equal(t, map[string]any{"fetch": int32(1), "q": "main", "actor": "scheduler"}, env.Data)
	}
	// within the TTL: the cached value
	clk.Add(59 * time.Second)
	env, err := r.ReadSource(context.Background(), "canteen.crowd")
	require.NoError(t, err)
	assert.Equal(t, int32(1), env.Data.(map[string]any)["fetch"])
	assert.Equal(t, int32(1), fetches.Load())
	// after it: a new fetch
	clk.Add(2 * time.Second)
	env, err = r.ReadSource(context.Background(), "canteen.crowd")
	require.NoError(t, err)
	assert.Equal(t, int32(2), env.Data.(map[string]any)["fetch"])

	_, err = r.ReadSource(context.Background(), "canteen.nope")
	assert.ErrorContains(t, err, "no data source")
	_, err = r.ReadSource(context.Background(), "nope.crowd")
	assert.Error(t, err)
	_, err = r.ReadSource(context.Background(), "canteen")
	assert.Error(t, err)
}

func TestCacheErrorsAreNotKept(t *testing.T) {
	c := registry.NewCache(nil)
	ctx := context.Background()
	calls := 0
	boom := errors.New("boom")
	fail := func(context.Context) (*registry.Envelope, error) { calls++; return nil, boom }
	_, err := c.Get(ctx, "k", time.Minute, fail)
	assert.ErrorIs(t, err, boom)
	_, err = c.Get(ctx, "k", time.Minute, fail)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 2, calls)

	ok := func(context.Context) (*registry.Envelope, error) { calls++; return &registry.Envelope{Data: 1}, nil }
	_, err = c.Get(ctx, "k", time.Minute, ok)
	require.NoError(t, err)
	_, err = c.Get(ctx, "k", time.Minute, ok)
	require.NoError(t, err)
	assert.Equal(t, 3, calls)
	c.Forget("")
	_, err = c.Get(ctx, "k", time.Minute, ok)
	require.NoError(t, err)
	assert.Equal(t, 4, calls)

	// a reader whose context ends stops waiting; the fetch finishes for others
	hold := make(chan struct{})
	slow := func(context.Context) (*registry.Envelope, error) {
		<-hold
		return &registry.Envelope{Data: "slow"}, nil
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.Get(cctx, "s", time.Minute, slow)
	assert.ErrorIs(t, err, context.Canceled)
	close(hold)
	env, err := c.Get(ctx, "s", time.Minute, slow)
	require.NoError(t, err)
	assert.Equal(t, "slow", env.Data)
}

// TestDataSourceRules: a data source is read as the scheduler, so a read
// tool whose mode asks is declined and a disabled plugin is refused.
func TestDataSourceRules(t *testing.T) {
	r := registry.New(registry.WithCompiler(echoCompiler))
	mustAdd(t, r, docFiles("canteen", "dataSources:\n  - { name: crowd, tool: crowd }\n",
		map[string]string{"crowd": toolYAML("read")}), registry.Community, registry.DocOptions{})
	env, err := r.ReadSource(context.Background(), "canteen.crowd")
	require.NoError(t, err)
	assert.True(t, env.Untrusted)
	r.Cache().Forget("canteen.")
	require.NoError(t, r.SetMode("canteen", manifest.Read, manifest.Ask))
	_, err = r.ReadSource(context.Background(), "canteen.crowd")
	var re *registry.RefusedError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, registry.ReasonSchedulerAsk, re.Decision.Reason)
}
