package proxy

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A services file in the contract's shape (origin, auth, login) points a
// built-in service at another server: the entry keeps what keeps a step
// away from the service's sessions and what the real service wants of
// every request, where the file says nothing of them.
func TestServicesFileKeepsEntryPointsAndFixedParts(t *testing.T) {
	srv := newRecorder(t, echo)
	p := writeFile(t, "services.yaml", "card:\n  origin: "+srv.URL+"\n  auth:\n    headers: [synjones-auth]\n  login:\n    redirect: /iaaa/login\n", 0o644)
	over, err := LoadServices(p)
	require.NoError(t, err)
	cat := Builtin().Merge(over)
	require.NoError(t, cat.Validate())
	card, builtin := cat["card"], Builtin()["card"]
	assert.Equal(t, srv.URL, card.Origin, "the file's origin")
	assert.Equal(t, Auth{Headers: []string{"synjones-auth"}}, card.Auth, "the file's auth, whole")
	assert.Equal(t, Login{Redirect: "/iaaa/login"}, card.Login, "the file's login, whole")
	assert.Equal(t, builtin.Entry, card.Entry)
	assert.Equal(t, builtin.Headers, card.Headers)
	assert.Equal(t, builtin.Query, card.Query)
	assert.Equal(t, builtin.QueryPaths, card.QueryPaths)
	assert.Equal(t, builtin.Concurrency, card.Concurrency)
	assert.NotEmpty(t, card.Entry)
	assert.NotEmpty(t, card.Headers)

	call := New(Config{Catalogue: cat, Keystore: MemKeystore(testSecrets())}).NewCall("d", access("card"))
	_, err = call.Do(context.Background(), &Request{Service: "card", Path: "/berserker-auth/cas/login/pku", Query: map[string][]string{"token": {"ATTACKER-ticket-0123456789abcdef"}}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrRefused), "%v", err)
	assert.Contains(t, err.Error(), "entry point")
	assert.Empty(t, srv.Hits(), "the entry point is refused before anything is sent")

	resp, err := call.Do(context.Background(), &Request{Service: "card", Path: "/berserker-app/ykt/tsm/queryCard"})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.Status)
	hits := srv.Hits()
	require.Len(t, hits, 1)
	for k, v := range builtin.Headers {
		assert.Equal(t, v, hits[0].Header.Get(k), "fixed header %s", k)
	}
	for k, v := range builtin.Query {
		assert.Contains(t, hits[0].RawQuery, k+"="+v)
	}
	assert.Equal(t, cardToken, hits[0].Header.Get("synjones-auth"))
}

// An entry the file adds of its own is kept beside the built-in's, and a
// service the catalogue does not have is the file's alone.
func TestMergeAddsEntries(t *testing.T) {
	over := Catalogue{
		"card":  {Name: "card", Origin: "http://127.0.0.1:1", Entry: []string{"/sso/"}},
		"extra": {Name: "extra", Origin: "http://127.0.0.1:2"},
	}
	cat := Builtin().Merge(over)
	assert.Equal(t, append(Builtin()["card"].Entry, "/sso/"), cat["card"].Entry)
	portal := Builtin().Merge(Catalogue{"portal": {Name: "portal", Origin: "http://127.0.0.1:1", Login: Login{Redirect: "/iaaa/login"}}})["portal"]
	assert.Contains(t, portal.Entry, "/portal2017/login.jsp", "the built-in's own login page stays an entry point")
	assert.Same(t, over["extra"], cat["extra"])
	assert.Equal(t, []string{"/sso/"}, over["card"].Entry, "over is not changed")
}
