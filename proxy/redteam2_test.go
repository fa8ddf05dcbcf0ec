package proxy

import (
	"bufio"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
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

// A server that answers 101 Switching Protocols (which the proxy never
// asks for: a step may not set Upgrade or Connection) hands over the raw
// connection, which neither the request timeout nor the caller's deadline
// closes: reading it to its end waited for as long as the server kept it
// open. Such an answer fails the request at once.
func TestSwitchingProtocolsRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					l, err := br.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n" + portalSess))
				// Held open until the client closes it (or a while).
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				io.Copy(io.Discard, c)
			}()
		}
	}()
	origin := "http://" + ln.Addr().String()
	cat := Catalogue{"portal": &Service{Name: "portal", Origin: origin, Auth: Auth{Cookies: []string{"SESSION"}}}}
	port := ln.Addr().(*net.TCPAddr).Port
	p := New(Config{Catalogue: cat, Keystore: MemKeystore(testSecrets()),
		Resolve: map[string]string{"web.example:" + strconv.Itoa(port): "127.0.0.1"}})
	web := "http://web.example:" + strconv.Itoa(port)
	a := access("portal")
	a.Web = append(a.Web, webOrigin("http", "web.example", port))
	call := p.NewCall("d", a)
	for _, r := range []*Request{{Service: "portal", Path: "/"}, {URL: web + "/"}} {
		resp, err := call.Do(context.Background(), r)
		require.Error(t, err, "%+v", resp)
		assert.Contains(t, err.Error(), "switch")
		assertNoSecret(t, "error", err.Error())
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
