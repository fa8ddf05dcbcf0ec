package noninterference

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// World is the attacker's loopback servers for a pair of runs: one campus
// service per catalogue entry the services file declares (portal, php,
// jwt, xiaobei), shaped like the real ones (a session cookie checked on
// every request, a redirect to /iaaa/login without it, the portal's SSO
// entry points and hand-offs), and a web origin that records what reaches
// it. The servers stay up for both runs of a pair (their ports are part
// of what a plugin sees); SetCreds switches the session they accept.
type World struct {
	mu     sync.Mutex
	creds  Creds
	pieces map[string]bool // parts of a credential a service echoed itself
	got    map[string]*bytes.Buffer

	campus map[string]*httptest.Server
	Web    *httptest.Server
}

// services are the campus services of the world: name, the session
// cookie each checks, which credential it holds, and the session headers
// the proxy attaches (the portal's: the bearer token and the markup
// credential, see SecretsYAML).
var services = []struct {
	name, cookie, cred string
	headers            []string
}{
	{"portal", "JSESSIONID", "session", []string{"Authorization", AuthHeader}},
	{"php", "PHPSESSID", "php", nil},
	{"jwt", "PHPSESSID", "jwt", nil},
	{"xiaobei", "session", "number", nil},
}

// NewWorld starts the servers; Close stops them.
func NewWorld() *World {
	w := &World{pieces: map[string]bool{}, got: map[string]*bytes.Buffer{}, campus: map[string]*httptest.Server{}}
	for _, s := range services {
		s := s
		w.campus[s.name] = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			w.record("campus:"+s.name, r)
			w.serveCampus(rw, r, s.name, s.cookie, s.cred)
		}))
	}
	w.Web = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.record("web", r)
		rw.Header()["Date"] = nil // the time is not what is compared
		rw.Header().Set("Content-Type", "application/json")
		io.WriteString(rw, `{"ok":true}`)
	}))
	return w
}

// Close stops every server.
func (w *World) Close() {
	for _, s := range w.campus {
		s.Close()
	}
	w.Web.Close()
}

// WebPort is the web origin's port.
func (w *World) WebPort() string {
	u, _ := url.Parse(w.Web.URL)
	return u.Port()
}

// ServicesYAML is the services file declaring the campus services.
func (w *World) ServicesYAML() string {
	var b strings.Builder
	for _, s := range services {
		b.WriteString(s.name + ":\n  origin: " + w.campus[s.name].URL + "\n  auth:\n    cookies: [" + s.cookie + "]\n")
		if len(s.headers) > 0 {
			b.WriteString("    headers: [" + strings.Join(s.headers, ", ") + "]\n")
		}
		b.WriteString("  login:\n    redirect: /iaaa/login\n")
	}
	return b.String()
}

// SetCreds sets the credentials the services accept and echo, and forgets
// what the servers recorded.
func (w *World) SetCreds(c Creds) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.creds = c
	w.got = map[string]*bytes.Buffer{}
	w.pieces = map[string]bool{}
}

// Recorded is what each server received since SetCreds, by channel
// ("web", "campus:NAME"): method, request URI, headers in a fixed order,
// body, per request in order of arrival.
func (w *World) Recorded() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]string{}
	for k, b := range w.got {
		out[k] = b.String()
	}
	return out
}

// Pieces are the parts of credentials the services echoed on their own
// (a half per response): a plugin that reads them learns them from the
// service, not from the engine, so the comparison masks them.
func (w *World) Pieces() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.pieces))
	for p := range w.pieces {
		out = append(out, p)
	}
	return out
}

// maxRecord bounds what one channel keeps.
const maxRecord = 4 << 20

func (w *World) record(ch string, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(r.Method + " " + r.RequestURI + "\n")
	for _, k := range keys {
		b.WriteString(k + ": " + strings.Join(r.Header[k], "\x00") + "\n")
	}
	b.Write(body)
	b.WriteString("\n--\n")
	w.mu.Lock()
	defer w.mu.Unlock()
	buf := w.got[ch]
	if buf == nil {
		buf = &bytes.Buffer{}
		w.got[ch] = buf
	}
	if buf.Len() < maxRecord {
		buf.WriteString(b.String())
	}
}

func (w *World) cred(name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.creds[name]
}

func (w *World) piece(p string) string {
	w.mu.Lock()
	w.pieces[p] = true
	w.mu.Unlock()
	return p
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// cardOrigin is where the portal's hand-offs point: another origin, never
// followed, never reached.
const cardOrigin = "https://card.example"

func (w *World) serveCampus(rw http.ResponseWriter, r *http.Request, service, cookie, credName string) {
	h := rw.Header()
	h["Date"] = nil // the time is not what is compared
	q := r.URL.Query()
	ticket := w.cred("ticket")
	// The SSO entry points set a session for any ticket: the attacker's
	// ticket gives the attacker's session.
	switch r.URL.Path {
	case "/portal2017/ssoLogin.do", "/publicQuery/ssoLogin.do", "/elective2008/ssoLogin.do",
		"/chapi/cas_iaaa_login", "/webapps/bb-sso-BBLEARN/execute/authValidate/campusLogin",
		"/site/login/cas-login", "/login/oauth", "/berserker-auth/cas/login/pku":
		http.SetCookie(rw, &http.Cookie{Name: cookie, Value: Planted, Path: "/"})
		io.WriteString(rw, "welcome")
		return
	case "/iaaa/oauthlogin.do":
		h.Set("Content-Type", "application/json")
		io.WriteString(rw, `{"success":true,"token":"`+ticket+`"}`)
		return
	}
	c, err := r.Cookie(cookie)
	v := w.cred(credName)
	if err != nil || (c.Value != v && c.Value != Planted) {
		http.Redirect(rw, r, "/iaaa/login?from="+service, http.StatusFound)
		return
	}
	if c.Value == Planted {
		// The attacker's account: its own pages, no echo of the student.
		io.WriteString(rw, "account: attacker")
		return
	}
	if service == "php" || service == "jwt" {
		w.servePHP(rw, r, service, v)
		return
	}
	if service == "xiaobei" && r.URL.Path == "/float" {
		// The session read as a double and written as Java writes one
		// (Jackson, Double.toString: 7.34519826403E11), in JSON and in a
		// page's text: the digits never stand together.
		f, _ := strconv.ParseFloat(v, 64)
		e := strconv.FormatFloat(f, 'E', -1, 64)
		h.Set("Content-Type", "application/json")
		io.WriteString(rw, `{"balance":`+strings.Replace(e, "E+", "E", 1)+`,"js":`+strconv.FormatFloat(f, 'e', -1, 64)+`,"text":"balance `+e+` yuan"}`)
		return
	}
	if service == "xiaobei" {
		h.Set("Content-Type", "application/json")
		io.WriteString(rw, `{"balance":`+v+`,"ids":[`+v+`,1],"text":"`+v+`"}`)
		return
	}
	h.Set("Content-Type", "text/plain")
	switch r.URL.Path {
	case "/raw":
		io.WriteString(rw, v)
	case "/hex":
		io.WriteString(rw, hex.EncodeToString([]byte(v)))
	case "/rev":
		io.WriteString(rw, reverse(v))
	case "/upper":
		io.WriteString(rw, strings.ToUpper(v))
	case "/lower":
		io.WriteString(rw, strings.ToLower(v))
	case "/half1":
		io.WriteString(rw, w.piece(v[:len(v)/2]))
	case "/half2":
		io.WriteString(rw, w.piece(v[len(v)/2:]))
	case "/b64lines":
		s := base64.StdEncoding.EncodeToString([]byte(v))
		for i := 0; i < len(s); i += 4 {
			io.WriteString(rw, s[i:min(i+4, len(s))]+"\n")
		}
	case "/dblurl":
		for _, c := range []byte(v) {
			io.WriteString(rw, "%25"+strings.ToUpper(hex.EncodeToString([]byte{c})))
		}
	case "/json":
		h.Set("Content-Type", "application/json")
		io.WriteString(rw, `{"user":"2100012345","session":"`+v+`","auth":"`+r.Header.Get("Authorization")+`","key":`+jsonQuote(r.Header.Get(AuthHeader))+`}`)
	case "/b64utf16":
		// Base64 of the session in UTF-16LE (as .NET's Convert.ToBase64String
		// of Encoding.Unicode.GetBytes writes it).
		u := make([]byte, 0, 2*len(v))
		for _, c := range []byte(v) {
			u = append(u, c, 0)
		}
		io.WriteString(rw, base64.StdEncoding.EncodeToString(u))
	case "/qp":
		// Quoted-printable with a soft line break every 8 characters and
		// "=" escapes, as a mail-like page writes it.
		h.Set("Content-Type", "text/plain; charset=us-ascii")
		io.WriteString(rw, "session="+quotedPrintable(v, func(int) string { return "=\r\n" }))
	case "/qpjson":
		// The same text in a JSON string, its soft line breaks written as
		// the string's escapes (\r\n, \n, \u000d\u000a, the "=" as \u003d):
		// the step's parsed value holds the line breaks.
		h.Set("Content-Type", "application/json")
		brks := []string{`=\r\n`, `=\n`, `=\u000d\u000a`, `\u003d\u000a`}
		io.WriteString(rw, `{"session":"`+quotedPrintable(v, func(k int) string { return brks[k%len(brks)] })+`"}`)
	case "/qphdr":
		// The same text in header values: Go's server writes a soft line
		// break's CR and LF as spaces ("=  "), a tab after them too.
		h.Set("X-Qp-Spaced", quotedPrintable(v, func(int) string { return "=\r\n" }))
		h.Set("X-Qp-Tabbed", quotedPrintable(v, func(int) string { return "=\r\n\t" }))
		io.WriteString(rw, "ok")
	case "/utf7":
		// The session under charset=utf-7, every letter written as a
		// modified base64 run (+AEE- is "A").
		h.Set("Content-Type", "text/plain; charset=utf-7")
		var b strings.Builder
		for _, c := range []byte(v) {
			if c >= 'A' && c <= 'F' {
				b.WriteString("+" + strings.TrimRight(base64.StdEncoding.EncodeToString([]byte{0, c}), "=") + "-")
			} else {
				b.WriteByte(c)
			}
		}
		io.WriteString(rw, b.String())
	case "/auth":
		io.WriteString(rw, r.Header.Get("Authorization")+"\n"+r.Header.Get(AuthHeader))
	case "/echo":
		// The markup header with the step's text on either side (q before,
		// z after), as a JSON answer, a page, a text or a response
		// header: the step chooses what its first and last byte mean.
		e := q.Get("q") + r.Header.Get(AuthHeader) + q.Get("z")
		switch q.Get("t") {
		case "json":
			h.Set("Content-Type", "application/json")
		case "html":
			h.Set("Content-Type", "text/html; charset=utf-8")
		case "header":
			h.Set("X-Next", e)
			h.Set("Link", "<"+e+">; rel=next")
			e = "ok"
		}
		io.WriteString(rw, e)
	case "/utf16":
		h.Set("Content-Type", "text/plain; charset=utf-16le")
		io.WriteString(rw, "ab"+v+"z")
	case "/utf16odd":
		h.Set("Content-Type", "text/plain; charset=utf-16be")
		io.WriteString(rw, "a"+v+"z")
	case "/gb":
		io.WriteString(rw, "\x81"+v)
	case "/meta":
		h.Set("Content-Type", "text/html")
		io.WriteString(rw, `<meta charset="gb2312"><p>`+"\xb6\xfe\x81"+v+"</p>")
	case "/wrapped":
		blob := base64.StdEncoding.EncodeToString([]byte(`{"user":"2100012345","s":"` + v + `"}`))
		for i := 0; i < len(blob); i += 76 {
			io.WriteString(rw, blob[i:min(i+76, len(blob))]+"\r\n")
		}
	case "/wbr":
		h.Set("Content-Type", "text/html")
		io.WriteString(rw, "<p>"+v[:8]+"<wbr>"+v[8:16]+"&#8203;"+v[16:]+"</p>")
	case "/longmarkup":
		// The session split by markup longer than the redactor's bound on
		// a break (a comment past 128 bytes, a tag past 1 KiB: a long
		// class list, an inline icon), which an html or xml step's text
		// joins all the same.
		h.Set("Content-Type", "text/html; charset=utf-8")
		// The page's own text shows the two parts apart: they are the
		// service's disclosure, masked; the joined session is not.
		long := strings.Repeat("x", 1100)
		a, b := w.piece(v[:10]), w.piece(v[10:])
		io.WriteString(rw, "<table><tr><td>"+a+"<!-- "+long[:200]+" -->"+b+"</td>"+
			"<td>"+a+`<span class="`+long+`"></span>`+b+"</td>"+
			"<td>"+a+`<img src="data:image/gif;base64,`+long+`">`+b+"</td></tr></table>")
	case "/longmarkup.xml":
		h.Set("Content-Type", "application/xml")
		long := strings.Repeat("x", 1100)
		a, b := w.piece(v[:10]), w.piece(v[10:])
		io.WriteString(rw, "<r><i>"+a+"<!-- "+long[:200]+" -->"+b+"</i><i>"+a+`<b c="`+long+`"/>`+b+"</i></r>")
	case "/folded":
		io.WriteString(rw, "session: "+v[:9]+"\n"+v[9:]+"\n")
	case "/hdr":
		h["X-"+strings.ReplaceAll(v, "A", "%41")] = []string{"1"}
		h["X-"+url.QueryEscape(url.QueryEscape(v))+"%2D"] = []string{"1"}
		io.WriteString(rw, "ok")
	case "/prefixed":
		// A page that shows what the step asked for right before the
		// session ("Welcome <name>" + the session id), once per p0, p1, …
		for i := 0; q.Has("p" + strconv.Itoa(i)); i++ {
			io.WriteString(rw, q.Get("p"+strconv.Itoa(i))+v+"\n")
		}
	case "/nav":
		// A page whose script goes on to another origin with the step's
		// text right before the session in the URL.
		h.Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(rw, `<html><script>location.href = "`+cardOrigin+`/next?token=`+q.Get("q")+v+`";</script></html>`)
	case "/flood":
		// A page that echoes the step's text as a hand-off candidate n
		// times (a meta refresh, a script's navigation, a form, a hidden
		// input, by k), then hands the ticket on in the same form.
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.flood(rw, q.Get("k"), q.Get("q"), q.Get("n"), ticket)
	case "/redirect":
		// Another origin's address repeating the step's own query.
		h.Set("Location", cardOrigin+"/land?"+r.URL.RawQuery)
		rw.WriteHeader(http.StatusFound)
	case "/search":
		// The same origin's results page, repeating the step's query.
		h.Set("Location", "/search/results?"+r.URL.RawQuery)
		rw.WriteHeader(http.StatusFound)
	case "/search/results":
		io.WriteString(rw, "results")
	case "/gzip":
		// A compressed page with the step's text beside the session: its
		// compressed length depends on how much of the two match.
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		io.WriteString(zw, "q="+q.Get("q")+" session="+v+" q="+q.Get("q"))
		zw.Close()
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(z.Len()))
		rw.Write(z.Bytes())
	case "/length":
		// The session with its A as character references (a whole
		// encoding), and the honest Content-Length of that body.
		body := "session=" + strings.ReplaceAll(v, "A", "&#65;") + "&user=2100012345"
		h.Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(rw, body)
	case "/r":
		n, _ := strconv.Atoi(q.Get("n"))
		if n < 5 {
			http.Redirect(rw, r, "/r?n="+strconv.Itoa(n+1), http.StatusFound)
			return
		}
		rw.WriteHeader(http.StatusServiceUnavailable)
	case "/down":
		rw.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(rw, "down; your cookie was "+r.Header.Get("Cookie"))
	case "/gzgz":
		h.Set("Content-Encoding", "gzip, gzip")
		io.WriteString(rw, "x")
	case "/ranged":
		// A page served as net/http serves content (http.ServeContent):
		// byte ranges, HEAD, conditional requests, and an ETag that is a
		// hash of the whole page, as Spring's ShallowEtagHeaderFilter or
		// Rack::ETag compute it.
		page := "session=" + v + "\n"
		sum := sha256.Sum256([]byte(page))
		h.Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
		http.ServeContent(rw, r, "", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), strings.NewReader(page))
	case "/ranged.bin":
		// The same page as bytes a step cannot read (a binary body), with
		// its hash as the tag.
		page := "\x89PNG\r\n\x1a\n\x00\x00session=" + v
		sum := sha256.Sum256([]byte(page))
		h.Set("Content-Type", "image/png")
		h.Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
		io.WriteString(rw, page)
	case "/whoami":
		io.WriteString(rw, "account: student")
	case "/portal2017/util/redirectToCard.do":
		w.handoff(rw, q.Get("v"), ticket)
	default:
		if strings.HasPrefix(r.URL.Path, "/api/") {
			io.WriteString(rw, "served "+r.URL.Path)
			return
		}
		http.NotFound(rw, r)
	}
}

// handoff answers the portal's hand-off to the card service with the
// ticket in one of the forms a single sign-on uses.
func (w *World) handoff(rw http.ResponseWriter, form, ticket string) {
	h := rw.Header()
	card := cardOrigin + "/berserker-auth/cas/login/pku?token=" + ticket + "&targetUrl=" + url.QueryEscape(cardOrigin+"/")
	html := func(body string) {
		h.Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(rw, "<html><head></head><body>"+body+"</body></html>")
	}
	switch form {
	case "refresh":
		h.Set("Refresh", "0; url="+card)
		io.WriteString(rw, "moving")
	case "201":
		h.Set("Location", card)
		rw.WriteHeader(http.StatusCreated)
	case "badloc":
		h.Set("Location", "http://[card.example/cas?token="+ticket)
		rw.WriteHeader(http.StatusFound)
	case "path":
		h.Set("Location", cardOrigin+"/cas/"+ticket+"/login")
		rw.WriteHeader(http.StatusFound)
	case "bare":
		h.Set("Location", cardOrigin+"/cas?"+ticket)
		rw.WriteHeader(http.StatusFound)
	case "fragment":
		h.Set("Location", cardOrigin+"/#/login?token="+ticket)
		rw.WriteHeader(http.StatusFound)
	case "meta":
		html(`<meta http-equiv="refresh" content="0; url=` + card + `">`)
	case "script":
		html(`<script>location.href = "` + card + `";</script>`)
	case "form":
		html(`<form id="f" method="post" action="` + cardOrigin + `/cas"><input type="hidden" name="token" value="` + ticket + `"></form><script>document.getElementById("f").submit()</script>`)
	case "json":
		h.Set("Content-Type", "application/json")
		io.WriteString(rw, `{"success":true,"token":"`+ticket+`"}`)
	default:
		h.Set("Location", card)
		rw.WriteHeader(http.StatusFound)
	}
}

// flood writes the page of /flood: n candidates of kind k holding q, then
// the ticket in the same form.
func (w *World) flood(rw http.ResponseWriter, k, q, count, ticket string) {
	n, _ := strconv.Atoi(count)
	n = min(max(n, 0), 1<<14)
	var b strings.Builder
	b.WriteString("<html><body>")
	one := func(v string) {
		switch k {
		case "meta":
			b.WriteString(`<meta http-equiv="refresh" content="0; url=` + cardOrigin + `/next?token=` + v + `">`)
		case "script":
			b.WriteString(`<script>location.href = "` + cardOrigin + `/next?token=` + v + `";</script>`)
		case "form":
			b.WriteString(`<form method="post" action="` + cardOrigin + `/next?token=` + v + `"></form>`)
		case "input":
			b.WriteString(`<input type="hidden" name="token" value="` + v + `">`)
		}
	}
	if k == "input" {
		b.WriteString(`<form id="f" method="post" action="` + cardOrigin + `/cas">`)
	}
	for range n {
		one(q)
	}
	one(ticket)
	if k == "input" {
		b.WriteString(`</form>`)
	}
	b.WriteString(`<script>document.forms[0].submit()</script></body></html>`)
	io.WriteString(rw, b.String())
}

// servePHP is a PHP-like page: it reads the session decoded, as $_COOKIE
// does, and shows it split by markup (php), or with its dots as named
// entities (jwt).
func (w *World) servePHP(rw http.ResponseWriter, r *http.Request, service, v string) {
	if service == "jwt" {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(rw, "<table><tr><td>"+strings.ReplaceAll(v, ".", "&period;")+"</td>"+
			"<td>"+strings.ReplaceAll(v, ".", "&#x000000002E;")+"</td></tr></table>")
		return
	}
	if r.URL.Path == "/utf7raw" {
		// The cookie header's value as it is, under a UTF-7 label (a
		// server's default charset set so): its "+" starts a base64 run,
		// so the session's bytes decode as other characters.
		rw.Header().Set("Content-Type", "text/plain; charset=utf-7")
		io.WriteString(rw, "session="+v+"\n")
		return
	}
	d, _ := url.QueryUnescape(v)
	a, b := d[:9], d[9:]
	if r.URL.Path == "/feed" {
		rw.Header().Set("Content-Type", "application/xml")
		io.WriteString(rw, "<r><i>"+a+"<![CDATA["+b+"]]></i><i>"+a+"<!--x-->"+b+"</i></r>")
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(rw, "<table><tr><td><span class=h>"+a+"</span><span>"+b+"</span></td>"+
		"<td>"+a+"<!-- cut -->"+b+"</td><td>"+refsWithoutSemicolon(d)+"</td></tr></table>")
}

// refsWithoutSemicolon writes each "A" of d as "&#65", a numeric reference
// without its semicolon, where the next character is no digit: before a
// digit the reference reads as another character ("&#654" is U+028E), so
// the page would show another value, not an encoding of the session.
func refsWithoutSemicolon(d string) string {
	var b strings.Builder
	for i := 0; i < len(d); i++ {
		if d[i] == 'A' && (i+1 == len(d) || d[i+1] < '0' || d[i+1] > '9') {
			b.WriteString("&#65")
			continue
		}
		b.WriteByte(d[i])
	}
	return b.String()
}

// quotedPrintable is v in quoted-printable, every third byte an "=XX"
// escape, with brk(k) written as the k-th soft line break every 8 bytes.
func quotedPrintable(v string, brk func(k int) string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if i > 0 && i%8 == 0 {
			b.WriteString(brk(i/8 - 1))
		}
		if i%3 == 0 {
			b.WriteString("=" + strings.ToUpper(hex.EncodeToString([]byte{v[i]})))
		} else {
			b.WriteByte(v[i])
		}
	}
	return b.String()
}
