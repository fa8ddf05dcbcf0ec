package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A campus response that repeats a session cookie's Set-Cookie with
// hundreds of values registers only the last one, as a browser keeps it:
// every new credential value rebuilds the redactor's patterns, so one
// response of 64 KiB of Set-Cookie lines used to cost a minute of CPU.
func TestRepeatedSessionSetCookieKeepsLast(t *testing.T) {
	const n = 300
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < n; i++ {
			w.Header().Add("Set-Cookie", fmt.Sprintf("SESSION=refreshed%s-%05d", r.URL.Path[1:], i))
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("first refreshed" + r.URL.Path[1:] + "-00000 last refreshed" + r.URL.Path[1:] + fmt.Sprintf("-%05d", n-1)))
	})
	ks := MemKeystore(testSecrets())
	p := testProxy(t, nil, portal, nil, Limits{}, ks)
	before := len(p.red.st.Load().known)
	call := p.NewCall("demo", access("portal"))
	resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/a"})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(p.red.st.Load().known), before+1, "one response registers at most one value per session cookie")
	ss, _ := ks.Get("portal")
	assert.Equal(t, fmt.Sprintf("refresheda-%05d", n-1), ss.Cookies["SESSION"], "the last line is the session")
	assert.Equal(t, "first refresheda-00000 last "+Marker, string(resp.Body))
	// The next request carries the stored value, and the one before it
	// stays redacted.
	_, err = call.Do(context.Background(), &Request{Service: "portal", Path: "/b"})
	require.NoError(t, err)
	h := portal.Hits()
	assert.True(t, strings.Contains(h[1].Header.Get("Cookie"), fmt.Sprintf("SESSION=refresheda-%05d", n-1)))
	assert.Equal(t, Marker, call.Redact(fmt.Sprintf("refresheda-%05d", n-1)))
}

// A service that renews every session cookie with a new value on every
// response makes the redactor register a value per cookie per response,
// each registration rebuilding its patterns: one response's values cost
// one rebuild, and past maxRefreshes new values in a call the request
// fails (a limit), so a "*" service holding many stored cookies cannot
// spend the call's time in the redactor. The values seen before the limit
// stay redacted.
func TestSessionRenewalsBounded(t *testing.T) {
	const cookies = 40
	stored := map[string]string{}
	for i := 0; i < cookies; i++ {
		stored[fmt.Sprintf("c%02d", i)] = fmt.Sprintf("storedValue-%02d-abcdef", i)
	}
	var n int
	course := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		n++
		for i := 0; i < cookies; i++ {
			w.Header().Add("Set-Cookie", fmt.Sprintf("c%02d=renewed-%03d-%02d-xyz", i, n, i))
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "now renewed-%03d-07-xyz", n)
	})
	cat := Catalogue{"course": &Service{Name: "course", Origin: course.URL, Auth: Auth{Cookies: []string{"*"}}}}
	ks := MemKeystore(Secrets{"course": {Cookies: stored}})
	p := New(Config{Catalogue: cat, Keystore: ks})
	call := p.NewCall("demo", access("course"))
	var err error
	var i int
	for i = 0; i < 20; i++ {
		var resp *Response
		resp, err = call.Do(context.Background(), &Request{Service: "course", Path: "/page"})
		if err != nil {
			break
		}
		assert.Equal(t, "now "+Marker, string(resp.Body))
	}
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrLimit)
	assert.Equal(t, maxRefreshes/cookies, i, "the request that passes the limit fails")
	assert.LessOrEqual(t, len(p.red.st.Load().known), cookies+maxRefreshes)
	assert.Equal(t, Marker, call.Redact("renewed-002-39-xyz"))
}

// A service that attaches every stored cookie ("*") and copies a query
// parameter into a cookie (a language, a theme): a plugin that chooses
// the value ("true") must not get it stored in the keystore as part of
// the session, where it would be redacted from every later result of
// every plugin (turning `true` into a marker, and JSON into non-JSON). A
// new cookie stays in the call's jar; a stored one is still refreshed.
func TestAllCookiesServiceStoresOnlySessionCookies(t *testing.T) {
	const fresh = "wprocSess-REFRESHED-0123456789"
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if l := r.URL.Query().Get("locale"); l != "" {
			http.SetCookie(w, &http.Cookie{Name: "locale", Value: l, Path: "/"})
		}
		if r.URL.Path == "/refresh" {
			http.SetCookie(w, &http.Cookie{Name: "PHPSESSID", Value: fresh, Path: "/"})
		}
		w.Write([]byte(`{"ok":true}`))
	})
	cat := Catalogue{"wproc": &Service{Name: "wproc", Origin: srv.URL, Auth: Auth{Cookies: []string{"*"}}}}
	require.NoError(t, cat.Validate())
	dir := t.TempDir()
	ks, err := OpenKeystore(dir + "/keystore.json")
	require.NoError(t, err)
	require.NoError(t, ks.Put("wproc", &ServiceSecrets{Cookies: map[string]string{"PHPSESSID": "wprocSess-0001-abcdef"}}))
	p := New(Config{Catalogue: cat, Keystore: ks})
	call := p.NewCall("demo", access("wproc"))
	resp, err := call.Do(context.Background(), &Request{Service: "wproc", Path: "/x", Query: url.Values{"locale": {"true"}}})
	require.NoError(t, err)
	assert.Equal(t, `{"ok":true}`, string(resp.Body))
	assert.Equal(t, "true", call.Redact("true"))

	// The new cookie goes back within the call, beside the session.
	_, err = call.Do(context.Background(), &Request{Service: "wproc", Path: "/refresh"})
	require.NoError(t, err)
	assert.Equal(t, "PHPSESSID=wprocSess-0001-abcdef; locale=true", srv.Hits()[1].Header.Get("Cookie"))
	assert.Equal(t, Marker, call.Redact(fresh), "a stored cookie's new value is a session value")

	// The keystore holds the refreshed session, and nothing else.
	ks2, err := OpenKeystore(dir + "/keystore.json")
	require.NoError(t, err)
	ss, _ := ks2.Get("wproc")
	assert.Equal(t, map[string]string{"PHPSESSID": fresh}, ss.Cookies)
	resp, err = New(Config{Catalogue: cat, Keystore: ks2}).NewCall("demo", access("wproc")).Do(context.Background(), &Request{Service: "wproc", Path: "/y"})
	require.NoError(t, err)
	assert.Equal(t, `{"ok":true}`, string(resp.Body))
}
