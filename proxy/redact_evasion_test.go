package proxy

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
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
	for _, fill := range []string{"\n", "a\n", "%41", "%2541", "&#x41;", "\\u0041", "%41\n", "=41", "= ", "%3D%20", "\\u003d\\n"} {
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

// A cookie value holding %XX escapes reaches a server that decodes it (as
// PHP's $_COOKIE and Express's cookie parser do, "+" becoming a space in
// PHP) and echoes it decoded: the decoded value is the credential too, and
// a step would get the stored value back with jq's @uri.
func TestDecodedCookieValueRedacted(t *testing.T) {
	const sess = "sess+Ab%2Bcd%2Fef%3D%3D-0192837465"
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("SESSION")
		v := c.Value
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/path":
			d, _ := url.PathUnescape(v)
			w.Write([]byte(`{"session":"` + d + `"}`))
		case "/php":
			d, _ := url.QueryUnescape(v)
			w.Write([]byte(`{"session":"` + d + `"}`))
		}
	})
	ks := MemKeystore(Secrets{"portal": {Cookies: map[string]string{"SESSION": sess}}})
	p := testProxy(t, nil, portal, nil, Limits{}, ks)
	call := p.NewCall("demo", access("portal"))
	for _, path := range []string{"/path", "/php"} {
		resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: path})
		require.NoError(t, err, path)
		assert.Equal(t, `{"session":"`+Marker+`"}`, string(resp.Body), path)
	}
}

// markupText is what an html or xml step, or one gsub in jq, makes of
// markup: the text with tags, comments and CDATA brackets removed and
// character references decoded.
func markupText(t *testing.T, s string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(s))
	require.NoError(t, err)
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return b.String()
}

// A page that shows a credential split by markup (a highlighted token:
// spans, an empty element, a comment; an XML text in CDATA pieces) or with
// numeric character references that lack their semicolon (which HTML
// parsers decode): the html and xml steps join the text, and one gsub in
// jq removes the tags, so the body must not hold the credential's pieces.
func TestCredentialSplitByMarkupRedacted(t *testing.T) {
	const sess = "portalSess-1a2b3c4d5e6f7a8b"
	a, b := sess[:11], sess[11:]
	pages := map[string]string{
		"/span":    "<p><span class=h>" + a + "</span><span class=p>" + b + "</span></p>",
		"/empty":   "<td>" + a + "<b></b>" + b + "</td>",
		"/comment": "<td>" + a + "<!-- cut -->" + b + "</td>",
		"/lines":   "<pre>" + a + "\n<i>\n" + b + "</i></pre>",
		"/numeric": "<td>" + strings.ReplaceAll(sess, "S", "&#83") + "</td>",
		"/hex":     "<td>" + strings.ReplaceAll(sess, "l", "&#x6c") + "</td>",
		"/escaped": `{"html":"` + a + `\u003cb\u003e\u003c/b\u003e` + b + `"}`,
		"/pretty":  "<td>\n  <span>" + a + "</span>\n  <span>" + b + "</span>\n</td>",
		"/indent":  "<pre>\n    " + a + "\n    " + b + "\n</pre>",
	}
	xmls := map[string]string{
		"/cdata":   "<r><i>" + a + "<![CDATA[" + b + "]]></i></r>",
		"/xmlnote": "<r><i>" + a + "<!--x--><?pi x?>" + b + "</i></r>",
	}
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if x, ok := xmls[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/xml")
			w.Write([]byte(x))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(pages[r.URL.Path]))
	})
	p := testProxy(t, nil, portal, nil, Limits{}, nil)
	call := p.NewCall("demo", access("portal"))
	tags := regexp.MustCompile(`<[^>]*>`)
	for path := range pages {
		resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: path})
		require.NoError(t, err, path)
		body := string(resp.Body)
		assert.Contains(t, body, Marker, path)
		joined := strings.Join(strings.Fields(markupText(t, body)), "")
		for _, form := range []string{body, markupText(t, body), joined, tags.ReplaceAllString(body, ""), strings.ReplaceAll(tags.ReplaceAllString(body, ""), "\n", "")} {
			assert.NotContains(t, form, sess, path)
		}
	}
	for path := range xmls {
		resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: path})
		require.NoError(t, err, path)
		body := string(resp.Body)
		assert.Contains(t, body, Marker, path)
		var text strings.Builder
		d := xml.NewDecoder(strings.NewReader(body))
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, "%s: the redacted XML still parses: %s", path, body)
			if cd, ok := tok.(xml.CharData); ok {
				text.Write(cd)
			}
		}
		assert.NotContains(t, text.String(), sess, path)
	}
}

// HTML parsers read &amp, &lt, &gt and &quot (either case) without their
// semicolon, also right before another reference: a credential holding
// "&" written so is decoded by the html step, and must be redacted.
func TestLegacyReferencesWithoutSemicolon(t *testing.T) {
	const sess = "sess&token-0123456789abcdef"
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<p>sess&amptoken-0123456789abcdef</p><p title="sess&AMPtoken-0123456789abcdef">x</p>` +
			`<p>sess&amp&#116;oken-0123456789abcdef</p>`))
	})
	p := testProxy(t, nil, portal, nil, Limits{}, MemKeystore(Secrets{"portal": {Cookies: map[string]string{"SESSION": sess}}}))
	resp, err := p.NewCall("demo", access("portal")).Do(context.Background(), &Request{Service: "portal", Path: "/"})
	require.NoError(t, err)
	body := string(resp.Body)
	assert.Equal(t, 3, strings.Count(body, Marker), body)
	doc, err := html.Parse(strings.NewReader(body))
	require.NoError(t, err)
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		assert.NotContains(t, n.Data, sess)
		for _, a := range n.Attr {
			assert.NotContains(t, a.Val, sess)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

// A credential wrapped over lines inside a JSON string (a server that
// base64-encodes with line breaks every 76 characters, then writes the text
// as JSON) holds "\n" or "\r\n" escapes where the step's parsed value holds
// line breaks, which one gsub removes: the view decodes JSON's short
// escapes as it decodes \u000a.
func TestCredentialWrappedInJSONString(t *testing.T) {
	a, b := portalSess[:10], portalSess[10:]
	bodies := []string{`{"t":"` + a + `\n` + b + `"}`, `{"t":"` + a + `\r\n` + b + `"}`, `{"t":"` + a + `\n  ` + b + `"}`}
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		i, _ := strconv.Atoi(r.URL.Path[1:])
		w.Write([]byte(bodies[i]))
	})
	p := testProxy(t, nil, portal, nil, Limits{}, nil)
	call := p.NewCall("demo", access("portal"))
	for i := range bodies {
		resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/" + strconv.Itoa(i)})
		require.NoError(t, err)
		assert.Equal(t, `{"t":"`+Marker+`"}`, string(resp.Body), bodies[i])
	}
}
