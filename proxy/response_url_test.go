package proxy

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A response's URL is shown as the proxy built it only when it is made of
// what the step sent (searched for credentials before anything left) and
// of public parts; a fixed query that holds a credential, and a credential
// the answer itself registered, are redacted in it as before.
func TestResponseURLRedaction(t *testing.T) {
	ctx := context.Background()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("fresh") != "" {
			// A new session value, which the redactor learns from the
			// answer: it spells a part of the URL that the step did not
			// send (the origin's port and the path's start).
			http.SetCookie(w, &http.Cookie{Name: "SESSION", Value: r.Host + "/api/rooms"})
		}
		w.Write([]byte("ok"))
	})
	cat := Catalogue{
		"plain":  {Name: "plain", Origin: srv.URL, Auth: Auth{Cookies: []string{"SESSION"}}, Query: map[string]string{"lang": "zh"}},
		"secret": {Name: "secret", Origin: srv.URL, Auth: Auth{Headers: []string{"synjones-auth"}}, Query: map[string]string{"t": cardToken}},
	}
	ks := MemKeystore(Secrets{"plain": {Cookies: map[string]string{"SESSION": portalSess}}, "secret": {Headers: map[string]string{"synjones-auth": cardToken}}})
	p := New(Config{Catalogue: cat, Keystore: ks})
	call := p.NewCall("demo", access("plain", "secret"))

	resp, err := call.Do(ctx, &Request{Service: "plain", Path: "/api/%E4%BA%8C/free", Query: url.Values{"page": {"2"}}})
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/api/%E4%BA%8C/free?page=2&lang=zh", resp.URL)

	resp, err = call.Do(ctx, &Request{Service: "secret", Path: "/x"})
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/x?t="+Marker, resp.URL, "a fixed query holding a credential is redacted")
	assert.Equal(t, "t="+url.QueryEscape(cardToken), srv.Hits()[1].RawQuery, "and was sent as the catalogue says")

	resp, err = call.Do(ctx, &Request{Service: "plain", Path: "/api/rooms", Query: url.Values{"fresh": {"1"}}})
	require.NoError(t, err)
	host := srv.URL[len("http://"):]
	assert.Equal(t, "http://"+Marker+"?fresh=1&lang=zh", resp.URL, "a value the answer registered is redacted in the URL")
	assert.True(t, p.red.knows(host+"/api/rooms"))
}
