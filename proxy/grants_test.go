package proxy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One document's grants, compiled once, start calls that share them and
// nothing else: each call has its own counters, and each registers the
// sessions the keystore holds when it starts, also one stored after the
// grants were compiled (a login between two calls).
func TestGrantsStartIndependentCalls(t *testing.T) {
	portal := newRecorder(t, echo)
	ks := MemKeystore(nil)
	p := testProxy(t, nil, portal, nil, Limits{MaxRequests: 1}, ks)
	g := p.Grants("demo", access("portal"))
	assert.Equal(t, []string{"portal"}, g.services)

	c1 := g.NewCall()
	_, err := c1.Do(context.Background(), &Request{Service: "portal", Path: "/a"})
	require.NoError(t, err)
	_, err = c1.Do(context.Background(), &Request{Service: "portal", Path: "/b"})
	require.ErrorIs(t, err, ErrLimit, "the first call's own count")

	require.NoError(t, ks.Update("portal", map[string]string{"SESSION": portalSess}))
	c2 := g.NewCall()
	assert.Equal(t, Marker, c2.Redact(portalSess), "a session stored since is registered when a call starts")
	resp, err := c2.Do(context.Background(), &Request{Service: "portal", Path: "/c"})
	require.NoError(t, err, "the second call counts its own requests")
	assert.Contains(t, string(resp.Body), "cookie=SESSION="+Marker)
	assertNoSecret(t, "body", string(resp.Body))
	_, err = g.NewCall().Do(context.Background(), &Request{Service: "other", Path: "/"})
	require.ErrorIs(t, err, ErrRefused, "an undeclared service stays refused")
}
