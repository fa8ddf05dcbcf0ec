package proxy

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/unicode"
)

// A server that echoes a credential as it is, under a charset label that
// reads its bytes as other characters, must not hand the step a text from
// which one line of jq gets the bytes back: UTF-16 turns each pair of
// ASCII bytes into one character, and an unlabelled non-UTF-8 body's
// GB18030 lead byte swallows the credential's first character, leaving
// the rest unmatched.
func TestCharsetLabelDoesNotHideCredential(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get("Synjones-Auth")
		switch r.URL.Path {
		case "/utf16le":
			w.Header().Set("Content-Type", "text/plain; charset=utf-16le")
			w.Write([]byte("ab" + tok + "z"))
		case "/utf16be":
			w.Header().Set("Content-Type", "application/json; charset=UTF-16BE")
			w.Write([]byte("a" + tok + "z"))
		case "/lead":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("\x81" + tok))
		case "/meta":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<meta charset="gbk"><p>` + "\xb6\xfe\xbd\xcc\x81" + tok))
		case "/honest":
			w.Header().Set("Content-Type", "text/plain; charset=utf-16le")
			b, _ := unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewEncoder().Bytes([]byte("x " + tok))
			w.Write(b)
		}
	})
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card"))
	tail := cardToken[len("bearer e"):] // what a swallowed first character leaves
	for _, path := range []string{"/utf16le", "/utf16be", "/lead", "/meta", "/honest"} {
		resp, err := call.Do(context.Background(), &Request{Service: "card", Path: path})
		require.NoError(t, err, path)
		body := string(resp.Body)
		assertNoSecret(t, path, body)
		assert.NotContains(t, body, tail, path)
		// What a step recovers from the characters: their code points'
		// bytes, as UTF-16 pairs.
		var le, be strings.Builder
		for _, r := range body {
			le.Write([]byte{byte(r), byte(r >> 8)})
			be.Write([]byte{byte(r >> 8), byte(r)})
		}
		assert.NotContains(t, le.String(), "eyJhbGciOiJIUzI1NiJ9", path)
		assert.NotContains(t, be.String(), "eyJhbGciOiJIUzI1NiJ9", path)
	}
	resp, err := call.Do(context.Background(), &Request{Service: "card", Path: "/honest"})
	require.NoError(t, err)
	assert.Equal(t, "x "+Marker, string(resp.Body), "a credential in the declared charset is redacted after decoding")
}

// Response header names are tokens, which may hold %XX escapes: a name
// holding a credential escaped (in any letter case, as HTTP canonicalises
// names) is dropped, as the plain one is.
func TestEscapedCredentialInHeaderNameDropped(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiJ9.Y2FyZC10b2tlbi0xMjM0NTY.s1gnatur3XyZ"
	pct := func(s string, upper bool) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			h := strconv.FormatInt(int64(c), 16)
			if upper {
				h = strings.ToUpper(h)
			}
			b.WriteString("%" + h)
		}
		return b.String()
	}
	names := []string{
		"X-" + url.QueryEscape(jwt),
		"X-" + pct(jwt, false),
		"X-" + pct(jwt, true),
		"X-" + strings.ReplaceAll(jwt, "s", "%73"),
		"X-" + strings.ReplaceAll(url.QueryEscape(url.QueryEscape(jwt)), ".", "%2E"),
	}
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		for _, n := range names {
			w.Header()[n] = []string{"1"}
		}
		w.Header().Set("X-Plain", "kept")
	})
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	resp, err := p.NewCall("demo", access("card")).Do(context.Background(), &Request{Service: "card", Path: "/"})
	require.NoError(t, err)
	for k := range resp.Header {
		un, _ := url.QueryUnescape(k)
		un2, _ := url.QueryUnescape(un)
		assert.NotContains(t, strings.ToLower(un2), strings.ToLower(jwt), "header %s", k)
	}
	assert.Equal(t, "kept", resp.Header.Get("X-Plain"))
}

// MaxRequests bounds the requests a call sends on the wire, each redirect
// hop and each retry included: a server that redirects or fails every
// request cannot multiply a plugin's requests.
func TestWireRequestsBounded(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n < 3 {
			http.Redirect(w, r, "/r?n="+strconv.Itoa(n+1), http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	p := testProxy(t, card, nil, nil, Limits{MaxRequests: 10}, nil)
	call := p.NewCall("demo", access("card"))
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		_, err = call.Do(context.Background(), &Request{Service: "card", Path: "/r", Query: url.Values{"n": {"0"}},
			Retry: &RetryPolicy{Max: 3, Backoff: 1}})
	}
	require.ErrorIs(t, err, ErrLimit)
	assert.Contains(t, err.Error(), "redirects and retries included")
	assert.Equal(t, int64(10), card.n.Load(), "requests on the wire")
	assert.Equal(t, 1, call.Requests(), "one request of the step, redirected and retried")
}

// jq's error messages show the first 30 bytes of a value and then " ...".
// Such a cut start of a credential used to be redacted, which made the
// redactor an oracle: a plugin could write guesses of a credential's start
// followed by " ..." and read back which one was replaced. Only whole
// values are replaced now: a cut start, as it is or JSON-escaped, stays.
func TestRedactCutPreview(t *testing.T) {
	p := testProxy(t, newRecorder(t, nil), nil, nil, Limits{}, MemKeystore(Secrets{
		"card": {Headers: map[string]string{"synjones-auth": `bearer quo"te\slash-token-0099`}}}))
	call := p.NewCall("demo", access("card"))
	for _, msg := range []string{
		`expected an array but got: object ({"a":"` + "bearer quo\\\"te\\\\slash-tok" + ` ...})`,
		`expected an object but got: string ("` + `quo\"te\\slash-token-00` + ` ...")`,
		`cannot subtract: array (["x","` + `quo\"te\\sla` + ` ...]) and number (1)`,
		"loading ...", `object ({"a":"quo ...})`, "abc",
	} {
		assert.Equal(t, msg, call.Redact(msg), "a credential's start is not a credential")
	}
	assert.Equal(t, "x "+Marker+" ...", call.Redact(`x quo"te\slash-token-0099 ...`), "a whole one is replaced")
}

// Headers that servers and their front ends read as another path (so a
// request under a declared prefix would reach another one) or another
// client address (campus services trust the campus network's) are
// refused, whatever their letter case, before anything leaves.
func TestPathAndAddressHeadersRefused(t *testing.T) {
	card := newRecorder(t, echo)
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card:/api/scores/"))
	for _, h := range []string{"X-Original-URL", "x-rewrite-url", "X-Host", "X-Forwarded-Prefix", "x-forwarded-port",
		"X-Forwarded-Server", "X-Client-IP", "Client-IP", "True-Client-IP", "X-Originating-IP", "X-Remote-IP",
		"X-Remote-Addr", "X-Cluster-Client-IP", "CF-Connecting-IP", "Fastly-Client-IP"} {
		_, err := call.Do(context.Background(), &Request{Service: "card", Path: "/api/scores/x",
			Header: http.Header{h: {"/admin/delete"}}})
		require.ErrorIs(t, err, ErrRefused, h)
	}
	assert.Equal(t, int64(0), card.n.Load())
	_, err := call.Do(context.Background(), &Request{Service: "card", Path: "/api/scores/x", Header: http.Header{"X-Requested-With": {"app"}}})
	require.NoError(t, err, "other headers still go")
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

// An escaper may write every ASCII punctuation character as its HTML5 name
// (PHP's htmlentities with ENT_HTML5: a JWT's dots as &period;), and
// numeric references may carry any number of leading zeros: an HTML step
// decodes both, so the redactor's views do too.
func TestRedactNamedAndPaddedReferences(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiJ9.Y2FyZC10b2tlbi0xMjM0NTY.s1gnatur3_XyZ"
	r := newRedactor()
	r.add(jwt)
	for _, in := range []string{
		strings.NewReplacer(".", "&period;", "_", "&lowbar;").Replace(jwt),
		strings.NewReplacer(".", "&#x0000000000002e;", "_", "&UnderBar;").Replace(jwt),
		`<td>` + strings.ReplaceAll(jwt, ".", "&#000000046;") + `</td>`,
		url.QueryEscape(strings.ReplaceAll(jwt, ".", "&period;")),
	} {
		out := r.string(in)
		assert.Contains(t, out, Marker, in)
		assert.NotContains(t, out, "Y2FyZC10b2tlbi0xMjM0NTY", in)
	}
	assert.Equal(t, "a&period;b &unknown; &#x2e", r.string("a&period;b &unknown; &#x2e"), "other text stays")
}

// A page that puts a session into a JavaScript string escapes it as JS
// does: Go's html/template writes + and = as \x2b and \x3d, / as \/, and
// escapers write ' as \'. The step's jq undoes that in a line, so the
// redactor's views decode them too.
func TestRedactJavaScriptEscapes(t *testing.T) {
	const tok = "YWJj+ZGVm/Z2hp=aWpr'bG1u"
	r := newRedactor()
	r.add(tok)
	js := strings.NewReplacer("+", `\x2b`, "=", `\x3D`, "/", `\/`, "'", `\'`).Replace(tok)
	for _, in := range []string{js, `<script>var t = "` + js + `";</script>`, url.QueryEscape(js)} {
		out := r.string(in)
		assert.Contains(t, out, Marker, in)
		assert.NotContains(t, out, "ZGVm", in)
	}
	assert.Equal(t, `a\x2b \xZZ \'`, r.string(`a\x2b \xZZ \'`), "other text stays")
}

// A server may wrap long lines at a column: MIME base64 at 76 characters
// (Java's MIME encoder), a text cut at 80; a page may put break
// opportunities into a long token (<wbr>, a zero-width space, a soft
// hyphen). A credential, or its base64, split so is joined back with one
// gsub, so it is redacted across the break; other text stays.
func TestRedactAcrossLineBreaks(t *testing.T) {
	const tok = "portalSess-1a2b3c4d5e6f7a8b-0123456789"
	r := newRedactor()
	r.add(tok)
	blob := base64.StdEncoding.EncodeToString([]byte(`{"user":"2100012345","session":"` + tok + `","lang":"zh"}`))
	var mime strings.Builder
	for i := 0; i < len(blob); i += 76 {
		mime.WriteString(blob[i:min(i+76, len(blob))] + "\r\n")
	}
	broken := func(sep string) string { return "<td>" + tok[:8] + sep + tok[8:16] + sep + tok[16:] + "</td>" }
	for _, in := range []string{mime.String(), "session: " + tok[:20] + "\n" + tok[20:] + "\nnext line\n", tok[:9] + "\r\n" + tok[9:],
		broken("<wbr>"), broken("\u200b"), broken("&shy;"), broken("\u00ad"), broken("&#8203;"),
		`{"s":"` + tok[:8] + `\u200b` + tok[8:] + `"}`, url.QueryEscape(tok[:8] + "\n" + tok[8:])} {
		out := r.string(in)
		assert.Contains(t, out, Marker, in)
		joined := strings.NewReplacer("\r", "", "\n", "", "<wbr>", "", "\u200b", "", "&shy;", "", "\u00ad", "", "&#8203;", "",
			`\u200b`, "", "%0A", "").Replace(out)
		assert.NotContains(t, joined, tok[5:25], in)
		if d, err := base64.StdEncoding.DecodeString(joined); err == nil {
			assert.NotContains(t, string(d), tok[5:25], in)
		}
	}
	assert.Equal(t, "two\nlines\r\n", r.string("two\nlines\r\n"))
}

// A response of nothing but escapes or breaks (4 MiB from a web origin:
// "%41" repeated, layered "%2541", references, newlines between letters)
// costs the redactor memory a small multiple of its size, not one 32-byte
// record per escape grown by doubling (300 MB and more), and a credential
// after it is still found.
func TestRedactManyEscapesStaysSmall(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation figures mean nothing under the race detector (sync.Pool drops items)")
	}
	const tok = "portalSess-1a2b3c4d5e6f7a8b-0123456789"
	r := newRedactor()
	r.add(tok)
	for _, fill := range []string{"\n", "a\n", "%41", "%2541", "&#x41;", "\\u0041", "%41\n"} {
		body := strings.Repeat(fill, (4<<20)/len(fill)) + tok[:10] + "\r\n" + tok[10:]
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out := r.string(body)
		runtime.ReadMemStats(&after)
		assert.True(t, strings.HasSuffix(out, Marker), fill)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(24*len(body)), "%q: bytes allocated", fill)
	}
}
