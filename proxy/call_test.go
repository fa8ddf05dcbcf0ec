package proxy

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEchoedCredentialsAreRedacted(t *testing.T) {
	card := newRecorder(t, echo)
	portal := newRecorder(t, echo)
	p := testProxy(t, card, portal, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card", "portal"))

	resp, err := call.Do(context.Background(), &Request{Service: "card", Path: "/berserker-app/ykt/tsm/queryCard"})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.Status)
	assertNoSecret(t, "card body", string(resp.Body))
	assert.Contains(t, string(resp.Body), "auth="+Marker)
	// The server did get the token, and the fixed header and query.
	h := card.Hits()[0]
	assert.Equal(t, cardToken, h.Header.Get("Synjones-Auth"))
	assert.Equal(t, "h5", h.Header.Get("Synaccesssource"))
	assert.Equal(t, "synAccessSource=h5", h.RawQuery)
	assert.Equal(t, card.URL+"/berserker-app/ykt/tsm/queryCard?synAccessSource=h5", resp.URL)
	assert.Empty(t, h.Header.Get("Cookie"), "card has no cookies: nothing else may be attached")
	assert.Empty(t, h.Header.Get("Authorization"), "treehole's Authorization lives on the same origin but must not go to card")

	resp, err = call.Do(context.Background(), &Request{Service: "portal", Path: "/portal2017/x"})
	require.NoError(t, err)
	assertNoSecret(t, "portal body", string(resp.Body))
	assert.Equal(t, "cookie=JSESSIONID="+Marker+"; SESSION="+Marker, strings.SplitN(string(resp.Body), "\n", 2)[0])
	assert.Equal(t, "JSESSIONID="+portalJSess+"; SESSION="+portalSess, portal.Hits()[0].Header.Get("Cookie"))
}

func TestSecretsOfAnotherServiceNeverSent(t *testing.T) {
	other := newRecorder(t, echo)
	portal := newRecorder(t, echo)
	// "other" has no session of its own; portal's secrets must not go there.
	secrets := testSecrets()
	delete(secrets, "other")
	p := testProxy(t, nil, portal, other, Limits{}, MemKeystore(secrets))
	call := p.NewCall("demo", access("other"))
	resp, err := call.Do(context.Background(), &Request{Service: "other", Path: "/"})
	require.NoError(t, err)
	assert.Equal(t, "", other.Hits()[0].Header.Get("Cookie"))
	assertNoSecret(t, "other body", string(resp.Body))
	// And a service not declared is refused outright.
	_, err = call.Do(context.Background(), &Request{Service: "portal", Path: "/"})
	require.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), `does not declare campus service "portal"`)
	assert.Equal(t, int64(0), portal.n.Load())
}

func TestStepMayNotSetCredentialHeaders(t *testing.T) {
	card := newRecorder(t, echo)
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card"))
	for _, h := range []string{"Cookie", "cookie", "Authorization", "AUTHORIZATION", "Host", "Accept-Encoding",
		"Connection", "Transfer-Encoding", "Content-Length", "Proxy-Authorization", "X-Forwarded-For",
		"synjones-auth", "X-XSRF-TOKEN"} {
		_, err := call.Do(context.Background(), &Request{Service: "card", Path: "/x", Header: http.Header{h: {"evil"}}})
		require.ErrorIs(t, err, ErrRefused, h)
	}
	_, err := call.Do(context.Background(), &Request{Service: "card", Path: "/x", Header: http.Header{"X-Ok": {"a\r\nCookie: x"}}})
	require.ErrorIs(t, err, ErrRefused)
	assert.Equal(t, int64(0), card.n.Load(), "no refused request reaches the server")
	// An ordinary header goes through.
	_, err = call.Do(context.Background(), &Request{Service: "card", Path: "/x", Header: http.Header{"Accept": {"application/json"}}})
	require.NoError(t, err)
	assert.Equal(t, "application/json", card.Hits()[0].Header.Get("Accept"))
}

func TestHostilePathsNeverLeaveTheOrigin(t *testing.T) {
	card := newRecorder(t, echo)
	attacker := newRecorder(t, echo)
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card:/api/"))
	evil := strings.TrimPrefix(attacker.URL, "http://")
	for _, path := range []string{
		"//" + evil + "/x", "http://" + evil + "/", "/..%2f..", "\\\\" + evil, "@" + evil, "/api/../admin",
		"/api/%2e%2e/admin", "/api/%2E%2e/admin", "/api/..;/admin", "/api/x%2fy", "/api/x%5cy", "/api/%252e%252e/admin",
		"/api//x", "https:" + evil, "/api/x#frag", "/api/\x00", "/api/%00", "api/x", "", "/admin", "/apix",
		"/api/./x", "/api/%2e/x", "/api/x%2F..%2F..%2Fadmin", " /api/x", "/api/x\\..\\admin",
	} {
		_, err := call.Do(context.Background(), &Request{Service: "card", Path: path})
		require.ErrorIs(t, err, ErrRefused, "path %q", path)
	}
	assert.Equal(t, int64(0), attacker.n.Load())
	assert.Equal(t, int64(0), card.n.Load())

	// Interpolated input that was escaped stays one segment, on the origin.
	in := url.PathEscape("..x?y=1#z @" + evil)
	resp, err := call.Do(context.Background(), &Request{Service: "card", Path: "/api/rooms/" + in + "/free"})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.Status)
	assert.Equal(t, int64(1), card.n.Load())
	assert.Equal(t, "/api/rooms/..x?y=1#z @"+evil+"/free", card.Hits()[0].Path)
	// An escaped value holding "/" or "\\", or that is "..", is refused, not split.
	for _, v := range []string{"../admin", "a/b", "a\\b", "..", "."} {
		_, err := call.Do(context.Background(), &Request{Service: "card", Path: "/api/rooms/" + url.PathEscape(v) + "/free"})
		require.ErrorIs(t, err, ErrRefused, v)
	}
	assert.Equal(t, int64(1), card.n.Load())
	assert.Equal(t, int64(0), attacker.n.Load())
}

func TestPathOfNonASCIIAndQuery(t *testing.T) {
	card := newRecorder(t, echo)
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card"))
	resp, err := call.Do(context.Background(), &Request{Service: "card", Path: "/api/classrooms/二教 1/free?time=今天",
		Query: url.Values{"lang": {"zh"}}})
	require.NoError(t, err)
	h := card.Hits()[0]
	assert.Equal(t, "/api/classrooms/二教 1/free", h.Path)
	q, _ := url.ParseQuery(h.RawQuery)
	assert.Equal(t, "今天", q.Get("time"))
	assert.Equal(t, "zh", q.Get("lang"))
	assert.Equal(t, "h5", q.Get("synAccessSource"))
	assert.Contains(t, string(resp.Body), "path=/api/classrooms/%E4%BA%8C%E6%95%99%201/free")
}

func TestRedirectToAttackerCarriesNothing(t *testing.T) {
	attacker := newRecorder(t, echo)
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, attacker.URL+"/steal?t="+url.QueryEscape(cardToken), http.StatusFound)
		case "/proto":
			w.Header().Set("Location", "//"+strings.TrimPrefix(attacker.URL, "http://")+"/x")
			w.WriteHeader(http.StatusFound)
		case "/port":
			// Same host, another port: another origin.
			http.Redirect(w, r, attacker.URL+"/x", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/there", http.StatusFound)
		default:
			echo(w, r)
		}
	})
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card"))
	for _, path := range []string{"/away", "/proto", "/port"} {
		resp, err := call.Do(context.Background(), &Request{Service: "card", Path: path})
		require.NoError(t, err, path)
		assert.True(t, isRedirect(resp.Status), path)
		assertNoSecret(t, "location", resp.Header.Get("Location"))
		assertNoSecret(t, "url", resp.URL)
	}
	assert.Equal(t, int64(0), attacker.n.Load(), "the attacker origin saw a request")

	// Same-origin redirects are followed, and signed again.
	resp, err := call.Do(context.Background(), &Request{Service: "card", Path: "/here"})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.Status)
	assert.Contains(t, string(resp.Body), "path=/there")
	assert.Contains(t, string(resp.Body), "auth="+Marker)
	assert.True(t, strings.HasSuffix(resp.URL, "/there?synAccessSource=h5"), resp.URL)
}

func TestRedirectOutsideDeclaredPathsNotFollowed(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/public/go" {
			http.Redirect(w, r, "/private/data", http.StatusFound)
			return
		}
		echo(w, r)
	})
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card:/public/"))
	resp, err := call.Do(context.Background(), &Request{Service: "card", Path: "/public/go"})
	require.NoError(t, err)
	assert.Equal(t, 302, resp.Status)
	assert.Equal(t, int64(1), card.n.Load())
}

func TestRedirectLoopBounded(t *testing.T) {
	n := 0
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		n++
		http.Redirect(w, r, fmt.Sprintf("/loop/%d", n), http.StatusFound)
	})
	p := testProxy(t, card, nil, nil, Limits{MaxRedirects: 3}, nil)
	call := p.NewCall("demo", access("card"))
	_, err := call.Do(context.Background(), &Request{Service: "card", Path: "/loop/0"})
	require.ErrorIs(t, err, ErrLimit)
	assert.Equal(t, int64(4), card.n.Load())
}

func TestLoginSignals(t *testing.T) {
	iaaa := newRecorder(t, echo)
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/iaaa/login?from=card", http.StatusFound)
		case "/elsewhere":
			http.Redirect(w, r, iaaa.URL+"/iaaa/login", http.StatusFound)
		case "/status":
			w.WriteHeader(401)
			w.Write([]byte(`{"code":401,"success":false,"message":"token失效"}`))
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"code":401,"success":false,"message":"token失效"}`))
		case "/jsonok":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"code":200,"success":true,"data":{"msg":"401"}}`))
		}
	})
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card"))
	for _, path := range []string{"/redirect", "/elsewhere", "/status", "/json"} {
		_, err := call.Do(context.Background(), &Request{Service: "card", Path: path})
		var lr *LoginRequiredError
		require.ErrorAs(t, err, &lr, path)
		assert.Equal(t, "card", lr.Service)
		assert.NotEmpty(t, lr.Message)
	}
	assert.Equal(t, int64(0), iaaa.n.Load())
	resp, err := call.Do(context.Background(), &Request{Service: "card", Path: "/jsonok"})
	require.NoError(t, err)
	assert.Equal(t, "application/json", resp.MediaType)
}

func TestServerErrorBodyRedacted(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Debug", "token="+cardToken)
		w.Header().Set("Synjones-Auth", cardToken)
		w.Header().Set("X-"+strings.TrimPrefix(cardToken, "bearer "), "1")
		w.WriteHeader(500)
		// The token raw, JSON-escaped, URL-encoded and base64-wrapped.
		fmt.Fprintf(w, `{"error":"bad token %s","esc":"%s","url":"%s","b64":"%s"}`,
			cardToken, jsonEscapeAll(cardToken), url.QueryEscape(cardToken), b64("user:"+cardToken))
	})
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card"))
	resp, err := call.Do(context.Background(), &Request{Service: "card", Path: "/x"})
	require.NoError(t, err)
	assert.Equal(t, 500, resp.Status)
	assertNoSecret(t, "500 body", string(resp.Body))
	assert.NotContains(t, string(resp.Body), jsonEscapeAll(cardToken))
	assert.Contains(t, string(resp.Body), "bad token "+Marker)
	assert.Empty(t, resp.Header.Get("Synjones-Auth"), "auth headers are removed from responses")
	assert.Equal(t, "token="+Marker, resp.Header.Get("X-Debug"))
	for k := range resp.Header {
		assertNoSecret(t, "header name", k)
		assert.NotContains(t, strings.ToLower(k), "s1gnatur3xyz", "a header named after the token is dropped")
	}
}

func TestSetCookieRefreshSavedAndHidden(t *testing.T) {
	const fresh = "portalSess-REFRESHED-5566778899"
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "SESSION", Value: fresh, Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "lb", Value: "node-7", Path: "/"})
		fmt.Fprintf(w, "you are %s", fresh)
	})
	dir := t.TempDir()
	ks, err := OpenKeystore(dir + "/keystore.json")
	require.NoError(t, err)
	require.NoError(t, ks.Put("portal", &ServiceSecrets{Cookies: map[string]string{"SESSION": portalSess}}))
	p := testProxy(t, nil, portal, nil, Limits{}, ks)
	call := p.NewCall("demo", access("portal"))
	resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/a"})
	require.NoError(t, err)
	assert.Empty(t, resp.Header.Values("Set-Cookie"))
	assert.Equal(t, "you are "+Marker, string(resp.Body))
	assert.Equal(t, Marker, call.Redact(fresh))

	// Saved to the file, and read back by a new keystore.
	ks2, err := OpenKeystore(dir + "/keystore.json")
	require.NoError(t, err)
	ss, ok := ks2.Get("portal")
	require.True(t, ok)
	assert.Equal(t, fresh, ss.Cookies["SESSION"])

	// The next request carries the fresh session and the jar's cookie.
	_, err = call.Do(context.Background(), &Request{Service: "portal", Path: "/b"})
	require.NoError(t, err)
	assert.Equal(t, "SESSION="+fresh+"; lb=node-7", portal.Hits()[1].Header.Get("Cookie"))
	// A new call starts with an empty jar.
	_, err = p.NewCall("demo", access("portal")).Do(context.Background(), &Request{Service: "portal", Path: "/c"})
	require.NoError(t, err)
	assert.Equal(t, "SESSION="+fresh, portal.Hits()[2].Header.Get("Cookie"))
}

func TestCSRFRuleAndJarStayOnTheirOrigin(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "csrf2", Value: "jarvalue1", Path: "/"})
		echo(w, r)
	})
	portal := newRecorder(t, echo)
	p := testProxy(t, card, portal, nil, Limits{}, nil)
	call := p.NewCall("demo", access("treehole", "portal"))
	_, err := call.Do(context.Background(), &Request{Service: "treehole", Path: "/a", Method: "POST", Body: []byte(`{}`), ContentType: "application/json"})
	require.NoError(t, err)
	h := card.Hits()[0]
	assert.Equal(t, "xsrf=token-4242aa", h.Header.Get("X-Xsrf-Token"))
	assert.Equal(t, treeholeJWT, h.Header.Get("Authorization"))
	assert.Equal(t, "_session=treeholeSessionCookie-77", h.Header.Get("Cookie"), "only declared auth cookies are attached")
	assert.Equal(t, "application/json", h.Header.Get("Content-Type"))
	assert.Equal(t, "{}", h.Body)
	_, err = call.Do(context.Background(), &Request{Service: "portal", Path: "/b"})
	require.NoError(t, err)
	assert.NotContains(t, portal.Hits()[0].Header.Get("Cookie"), "jarvalue1")
}

func TestUnknownAndInvalidServices(t *testing.T) {
	p := New(Config{Catalogue: Catalogue{"bad": {Name: "bad", Origin: "http://example.com"}}})
	call := p.NewCall("demo", access("bad", "nope"))
	_, err := call.Do(context.Background(), &Request{Service: "bad", Path: "/"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "must use https")
	_, err = call.Do(context.Background(), &Request{Service: "nope", Path: "/"})
	require.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), "unknown campus service")
}

func TestRequestShapeRefused(t *testing.T) {
	card := newRecorder(t, echo)
	p := testProxy(t, card, nil, nil, Limits{MaxRequestBytes: 10}, nil)
	call := p.NewCall("demo", access("card"))
	cases := []*Request{
		{},
		{Service: "card", Path: "/", URL: "https://example.com/"},
		{Service: "card", Path: "/", Method: "CONNECT"},
		{Service: "card", Path: "/", Method: "TRACE"},
		{Service: "card", Path: "/", Method: "POST", Body: []byte("more than ten bytes")},
		{Service: "card", Path: "/", ContentType: "text/plain\r\nX: y"},
	}
	for i, r := range cases {
		_, err := call.Do(context.Background(), r)
		require.Error(t, err, i)
	}
	assert.Equal(t, int64(0), card.n.Load())
}

func TestHTTPSVerifiedForCredentials(t *testing.T) {
	srv := newTLSRecorder(t)
	cat := Catalogue{"card": {Name: "card", Origin: srv.URL, Auth: Auth{Headers: []string{"synjones-auth"}}}}
	p := New(Config{Catalogue: cat, Keystore: MemKeystore(testSecrets())})
	_, err := p.NewCall("demo", access("card")).Do(context.Background(), &Request{Service: "card", Path: "/"})
	var re *RequestError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "certificate")
	assert.Equal(t, int64(0), srv.n.Load(), "an unverified server got a request")
	assertNoSecret(t, "error", err.Error())
}

func jsonEscapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.String()
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func newTLSRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.n.Add(1)
		echo(w, req)
	}))
	r.Server.Config.ErrorLog = log.New(io.Discard, "", 0)
	t.Cleanup(r.Close)
	return r
}

func TestShortSessionCookieNeitherStoredNorRedacted(t *testing.T) {
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "SESSION", Value: "1"})
		w.Write([]byte(`{"a":1,"b":[1,2,3]}`))
	})
	ks := MemKeystore(testSecrets())
	p := testProxy(t, nil, portal, nil, Limits{}, ks)
	resp, err := p.NewCall("demo", access("portal")).Do(context.Background(), &Request{Service: "portal", Path: "/"})
	require.NoError(t, err)
	assert.Equal(t, `{"a":1,"b":[1,2,3]}`, string(resp.Body))
	ss, _ := ks.Get("portal")
	assert.Equal(t, portalSess, ss.Cookies["SESSION"])
}

func TestRequestErrorsAreRedactedAndOpaque(t *testing.T) {
	// A loopback port with nothing listening: connection refused.
	srv := newRecorder(t, echo)
	addr := srv.URL
	srv.Close()
	cat := Catalogue{"card": {Name: "card", Origin: addr, Auth: Auth{Headers: []string{"synjones-auth"}},
		Query: map[string]string{"t": cardToken}}}
	p := New(Config{Catalogue: cat, Keystore: MemKeystore(testSecrets())})
	_, err := p.NewCall("demo", access("card")).Do(context.Background(), &Request{Service: "card", Path: "/x"})
	var re *RequestError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "card", re.Service)
	assertNoSecret(t, "error", err.Error())
	assert.Contains(t, re.URL, Marker, "the fixed query holding a credential is redacted in the URL")
	assert.Nil(t, errors.Unwrap(err), "the original error (with its URL) is not reachable")
	assert.False(t, re.Timeout)
}

// The CSRF header comes from the call's jar when the session holds no such
// cookie; the session's signing material follows a session that changes
// in the keystore.
func TestCSRFFromJarAndSessionChange(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "XSRF-TOKEN", Value: "jar%3Dcsrf-77", Path: "/"})
		echo(w, r)
	})
	ks := MemKeystore(Secrets{"treehole": {Headers: map[string]string{"Authorization": treeholeJWT},
		Cookies: map[string]string{"_session": "treeholeSessionCookie-77"}}})
	p := testProxy(t, card, nil, nil, Limits{}, ks)
	call := p.NewCall("demo", access("treehole"))
	for i := 0; i < 2; i++ {
		_, err := call.Do(context.Background(), &Request{Service: "treehole", Path: "/a"})
		require.NoError(t, err)
	}
	hits := card.Hits()
	assert.Empty(t, hits[0].Header.Get("X-Xsrf-Token"), "no CSRF cookie yet")
	assert.Equal(t, "_session=treeholeSessionCookie-77", hits[0].Header.Get("Cookie"))
	assert.Equal(t, "jar=csrf-77", hits[1].Header.Get("X-Xsrf-Token"), "from the jar, decoded")
	assert.Equal(t, "XSRF-TOKEN=jar%3Dcsrf-77; _session=treeholeSessionCookie-77", hits[1].Header.Get("Cookie"))
	assert.Equal(t, treeholeJWT, hits[1].Header.Get("Authorization"))

	require.NoError(t, ks.Update("treehole", map[string]string{"_session": "treeholeSessionCookie-88"}))
	_, err := call.Do(context.Background(), &Request{Service: "treehole", Path: "/a"})
	require.NoError(t, err)
	assert.Equal(t, "XSRF-TOKEN=jar%3Dcsrf-77; _session=treeholeSessionCookie-88", card.Hits()[2].Header.Get("Cookie"))
	assert.Equal(t, Marker, call.Redact("treeholeSessionCookie-88"), "the new session is redacted")
}

// A server that echoes a session value with special characters double
// URL-encoded, or in hexadecimal (either case), in its body and in a
// header: the step sees the marker, never a form it could decode.
func TestEchoedEncodedCredentialsAreRedacted(t *testing.T) {
	const special = "s3cr3t/Se+ss=ion&<x>"
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		v := special
		q := url.QueryEscape
		hx := hex.EncodeToString([]byte(v))
		w.Header().Set("X-Echo", q(q(v))+" "+strings.ToUpper(hx))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"double":"%s","path":"%s","hex":"%s","HEX":"%s"}`,
			q(q(v)), url.PathEscape(url.PathEscape(v)), hx, strings.ToUpper(hx))
	})
	ks := MemKeystore(Secrets{"portal": {Headers: map[string]string{"X-Sess": special}}})
	cat := Catalogue{"portal": {Name: "portal", Origin: portal.URL, Auth: Auth{Headers: []string{"X-Sess"}}}}
	p := New(Config{Catalogue: cat, Keystore: ks})
	resp, err := p.NewCall("demo", access("portal")).Do(context.Background(), &Request{Service: "portal", Path: "/x"})
	require.NoError(t, err)
	assert.Equal(t, special, portal.Hits()[0].Header.Get("X-Sess"), "the server got the session")
	want := `{"double":"` + Marker + `","path":"` + Marker + `","hex":"` + Marker + `","HEX":"` + Marker + `"}`
	assert.Equal(t, want, string(resp.Body))
	assert.Equal(t, Marker+" "+Marker, resp.Header.Get("X-Echo"))
}

// TestSignPrecedence: what the proxy sets (fixed headers, the session)
// wins over a step's value; a step's User-Agent replaces the default one
// but not one the service fixes; the request's content type wins over a
// step's Content-Type header; and a step's header on one request never
// reaches the next (requests start from a shared header the proxy never
// changes).
func TestSignPrecedence(t *testing.T) {
	srv := newRecorder(t, nil)
	cat := Catalogue{
		"card": &Service{Name: "card", Origin: srv.URL, Auth: Auth{Headers: []string{"synjones-auth"}},
			Headers: map[string]string{"synaccesssource": "h5", "Accept": "application/json"}},
		"fixedua": &Service{Name: "fixedua", Origin: srv.URL, Headers: map[string]string{"User-Agent": "campus-app/2"}},
	}
	require.NoError(t, cat.Validate())
	p := New(Config{Catalogue: cat, Keystore: MemKeystore(testSecrets())})
	call := p.NewCall("demo", access("card", "fixedua"))
	ctx := context.Background()

	_, err := call.Do(ctx, &Request{Service: "card", Path: "/a", Method: "POST", Body: []byte(`{}`), ContentType: "application/json",
		Header: http.Header{"Accept": {"text/evil"}, "User-Agent": {"step-agent/1"}, "Content-Type": {"text/plain"}, "X-Requested-With": {"1"}}})
	require.NoError(t, err)
	// A header off the allow-list (the service's own fixed one too) is
	// refused before anything is sent.
	_, err = call.Do(ctx, &Request{Service: "card", Path: "/a", Header: http.Header{"synaccesssource": {"evil"}}})
	require.ErrorIs(t, err, ErrRefused)
	_, err = call.Do(ctx, &Request{Service: "card", Path: "/b"})
	require.NoError(t, err)
	_, err = call.Do(ctx, &Request{Service: "fixedua", Path: "/c", Header: http.Header{"User-Agent": {"step-agent/1"}}})
	require.NoError(t, err)

	hits := srv.Hits()
	require.Len(t, hits, 3)
	first, second, third := hits[0].Header, hits[1].Header, hits[2].Header
	assert.Equal(t, []string{"h5"}, first["Synaccesssource"])
	assert.Equal(t, []string{"application/json"}, first["Accept"], "a fixed header wins over the step's")
	assert.Equal(t, cardToken, first.Get("Synjones-Auth"))
	assert.Equal(t, "step-agent/1", first.Get("User-Agent"), "a step may name itself")
	assert.Equal(t, "application/json", first.Get("Content-Type"))
	assert.Equal(t, "1", first.Get("X-Requested-With"))

	assert.Empty(t, second.Get("X-Requested-With"), "a step's header leaked into the next request")
	assert.Equal(t, userAgent, second.Get("User-Agent"))
	assert.Equal(t, []string{"h5"}, second["Synaccesssource"])
	assert.Equal(t, cardToken, second.Get("Synjones-Auth"))

	assert.Equal(t, "campus-app/2", third.Get("User-Agent"), "a User-Agent the service fixes wins")
	assert.Empty(t, third.Get("Synjones-Auth"), "card's session went to another service")
}
