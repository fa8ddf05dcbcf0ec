package registry

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Cache keeps data-source results for their TTL. Concurrent readers of one
// key share one fetch; errors are not kept.
type Cache struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	done    chan struct{} // closed when the fetch ends
	val     *Envelope
	err     error
	expires time.Time
}

// NewCache makes a cache with a clock (nil: the real one).
func NewCache(now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{now: now, entries: map[string]*cacheEntry{}}
}

// Get returns the cached value of key, or fetches it once for every
// concurrent caller and keeps it for ttl. A caller whose context ends stops
// waiting; the fetch goes on for the others.
func (c *Cache) Get(ctx context.Context, key string, ttl time.Duration, fetch func(context.Context) (*Envelope, error)) (*Envelope, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok {
		select {
		case <-e.done:
			if e.err == nil && c.now().Before(e.expires) {
				c.mu.Unlock()
				return e.val, nil
			}
			ok = false // expired or failed: fetch again
		default: // in flight: wait for it
		}
	}
	if !ok {
		e = &cacheEntry{done: make(chan struct{})}
		c.entries[key] = e
		go func() {
			v, err := fetch(context.WithoutCancel(ctx))
			c.mu.Lock()
			e.val, e.err, e.expires = v, err, c.now().Add(ttl)
			if err != nil {
				delete(c.entries, key)
			}
			c.mu.Unlock()
			close(e.done)
		}()
	}
	c.mu.Unlock()
	select {
	case <-e.done:
		return e.val, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Forget drops every entry whose key starts with prefix ("" drops all).
func (c *Cache) Forget(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if strings.HasPrefix(k, prefix) {
			select {
			case <-e.done:
				delete(c.entries, k)
			default:
			}
		}
	}
}

// ReadSource returns a data source's result, "<plugin>.<source>", through
// the cache. The call is made as the scheduler (read tools only, an ask is
// declined), with the source's fixed input. When the tool declares an
// output schema, a result that does not match it is refused (an error
// wrapping ErrOutputSchema, naming no text of the result) and not cached:
// widgets read data sources, and show only what conforms.
func (r *Registry) ReadSource(ctx context.Context, key string) (*Envelope, error) {
	plugin, name, ok := strings.Cut(key, ".")
	if !ok {
		return nil, fmt.Errorf("data source %q must be <plugin>.<source>", key)
	}
	d, ok := r.Document(plugin)
	if !ok || d.Plugin == nil {
		return nil, fmt.Errorf("no plugin %q", plugin)
	}
	for _, ds := range d.Plugin.DataSources {
		if ds.Name != name {
			continue
		}
		call := Call{Tool: d.ID + "." + ds.Tool, Actor: Scheduler, Input: ds.Args}
		if dec := r.Decide(call); !dec.Allow {
			return nil, dec.Err()
		}
		return r.cache.Get(ctx, d.ID+"."+ds.Name, time.Duration(ds.TTLMs)*time.Millisecond, func(ctx context.Context) (*Envelope, error) {
			env, err := r.Invoke(ctx, call, nil)
			if err != nil {
				return nil, err
			}
			// What a widget shows is checked against the tool's output
			// schema first; a result that does not match is not kept.
			full := env.Full
			if full == nil {
				full = env.Data
			}
			if err := CheckOutput(d.Plugin, ds.Tool, full); err != nil {
				return nil, fmt.Errorf("data source %s.%s: %w", d.ID, ds.Name, err)
			}
			return env, nil
		})
	}
	return nil, fmt.Errorf("plugin %s has no data source %q", d.ID, name)
}

// Cache returns the registry's data-source cache.
func (r *Registry) Cache() *Cache { return r.cache }
