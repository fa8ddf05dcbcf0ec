package plugintest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/pkuinfo/harness/internal/cli"
	"github.com/pkuinfo/harness/internal/noninterference"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An encoding a hostile service writes a value in.
type encoding struct {
	name string
	enc  func(string) string
}

func eachByte(v, format string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		fmt.Fprintf(&b, format, v[i])
	}
	return b.String()
}

func utf16Bytes(v string, order binary.ByteOrder) []byte {
	units := utf16.Encode([]rune(v))
	out := make([]byte, 2*len(units))
	for i, u := range units {
		order.PutUint16(out[2*i:], u)
	}
	return out
}

func reversed(v string) string {
	r := []rune(v)
	slices.Reverse(r)
	return string(r)
}

// quotedPrintable escapes every other byte; with soft, a soft line break
// after every 7 bytes (in a body: a header value cannot hold one).
func quotedPrintable(soft bool) func(string) string {
	return func(v string) string {
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			if soft && i > 0 && i%7 == 0 {
				b.WriteString("=\r\n")
			}
			if i%2 == 0 {
				fmt.Fprintf(&b, "=%02X", v[i])
			} else {
				b.WriteByte(v[i])
			}
		}
		return b.String()
	}
}

// hostileEncodings are the forms the proxy's redactor knows (docs/proxy.md):
// HTML character references, percent escapes in either case, JSON \u
// escapes, base64 in its alignments and alphabets (of the bytes and of
// UTF-16), quoted-printable, and the transforms a step could undo.
var hostileEncodings = []encoding{
	{"raw", func(v string) string { return v }},
	{"html-dec", func(v string) string { return eachByte(v, "&#%d;") }},
	{"html-hex", func(v string) string { return eachByte(v, "&#x%x;") }},
	{"html-HEX", func(v string) string { return eachByte(v, "&#X%02X;") }},
	{"pct-upper", func(v string) string { return eachByte(v, "%%%02X") }},
	{"pct-lower", func(v string) string { return eachByte(v, "%%%02x") }},
	{"json-u", func(v string) string { return eachByte(v, `\u%04x`) }},
	{"json-U", func(v string) string { return eachByte(v, `\u%04X`) }},
	{"b64", func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }},
	{"b64url", func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }},
	{"b64-1", func(v string) string { return base64.StdEncoding.EncodeToString([]byte("u=" + v)) }},
	{"b64-2", func(v string) string { return base64.URLEncoding.EncodeToString([]byte("{\"s\":\"" + v + "\"}")) }},
	{"b64-utf16le", func(v string) string { return base64.StdEncoding.EncodeToString(utf16Bytes(v, binary.LittleEndian)) }},
	{"b64-utf16be", func(v string) string { return base64.StdEncoding.EncodeToString(utf16Bytes(v, binary.BigEndian)) }},
	{"qp", quotedPrintable(false)},
	{"rev", reversed},
	{"upper", strings.ToUpper},
	{"lower", strings.ToLower},
	{"hex", func(v string) string { return hex.EncodeToString([]byte(v)) }},
	{"HEX", func(v string) string { return strings.ToUpper(hex.EncodeToString([]byte(v))) }},
	// What a cookie parser makes of a value with escapes and a "+".
	{"cookie-query", func(v string) string { d, _ := url.QueryUnescape(v); return d }},
	{"cookie-path", func(v string) string { d, _ := url.PathUnescape(v); return d }},
}

// b64Fragments are the characters base64 of any text holding v has, at
// each alignment, in both alphabets, of v's bytes and of its UTF-16 forms:
// what no output may hold.
func b64Fragments(v string) []string {
	var out []string
	for _, d := range [][]byte{[]byte(v), utf16Bytes(v, binary.LittleEndian), utf16Bytes(v, binary.BigEndian)} {
		for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for k := 0; k < 3; k++ {
				s := e.EncodeToString(append(make([]byte, k), d...))
				from, to := (8*k+5)/6, 8*(k+len(d))/6
				out = append(out, s[from:to])
			}
		}
	}
	return out
}

// hostileCampus is two campus services on loopback that check their
// session and echo the session they were sent in every encoding, in the
// body, in headers, in Set-Cookie, in a redirect's Location and in JSON;
// the portal also rotates its session once.
type hostileCampus struct {
	mu      sync.Mutex
	creds   noninterference.Creds
	portal  *httptest.Server
	php     *httptest.Server
	rotated bool
}

func newHostileCampus(t *testing.T) *hostileCampus {
	c := &hostileCampus{}
	c.portal = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.serve(w, r, "JSESSIONID") }))
	c.php = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.serve(w, r, "PHPSESSID") }))
	t.Cleanup(c.portal.Close)
	t.Cleanup(c.php.Close)
	return c
}

func (c *hostileCampus) set(cr noninterference.Creds) {
	c.mu.Lock()
	c.creds, c.rotated = cr, false
	c.mu.Unlock()
}

func (c *hostileCampus) servicesYAML() string {
	return "portal:\n  origin: " + c.portal.URL + "\n  auth:\n    cookies: [JSESSIONID]\n    headers: [Authorization]\n  login:\n    redirect: /iaaa/login\n" +
		"php:\n  origin: " + c.php.URL + "\n  auth:\n    cookies: [PHPSESSID]\n  login:\n    redirect: /iaaa/login\n"
}

func secretsYAML(cr noninterference.Creds) string {
	return "portal:\n  cookies: { JSESSIONID: \"" + cr["session"] + "\" }\n  headers: { Authorization: \"Bearer " + cr["token"] + "\" }\n" +
		"php:\n  cookies: { PHPSESSID: \"" + cr["php"] + "\" }\n"
}

func (c *hostileCampus) serve(w http.ResponseWriter, r *http.Request, cookie string) {
	w.Header()["Date"] = nil
	c.mu.Lock()
	cr, rotated := c.creds, c.rotated
	c.mu.Unlock()
	got, err := r.Cookie(cookie)
	want := cr["php"]
	if cookie == "JSESSIONID" {
		want = cr["session"]
		if rotated {
			want = cr["ticket"]
		}
	}
	if err != nil || got.Value != want {
		http.Redirect(w, r, "/iaaa/login", http.StatusFound)
		return
	}
	if r.URL.Path == "/me" {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		for _, f := range personalForms(studentName) {
			fmt.Fprintf(w, "<p class=name>%s</p>\n", f)
		}
		for _, f := range personalForms(studentID) {
			fmt.Fprintf(w, "<p class=sno>%s</p>\n", f)
		}
		return
	}
	if r.URL.Path == "/rotate" {
		http.SetCookie(w, &http.Cookie{Name: cookie, Value: cr["ticket"], Path: "/"})
		c.mu.Lock()
		c.rotated = true
		c.mu.Unlock()
		io.WriteString(w, "rotated")
		return
	}
	v := got.Value
	if r.URL.Query().Get("v") == "token" {
		v = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	h := w.Header()
	switch r.URL.Query().Get("w") {
	case "body":
		h.Set("Content-Type", "text/html; charset=utf-8")
		for _, e := range hostileEncodings {
			fmt.Fprintf(w, "<p class=%s>%s</p>\n", e.name, e.enc(v))
		}
		fmt.Fprintf(w, "<pre>%s</pre>\n", quotedPrintable(true)(v))
	case "headers":
		for _, e := range hostileEncodings {
			h.Set("X-Echo-"+e.name, e.enc(v))
		}
		h.Set("Content-Type", "text/plain")
		io.WriteString(w, "see the headers")
	case "cookies":
		for _, e := range hostileEncodings {
			h.Add("Set-Cookie", "echo-"+e.name+"="+e.enc(v)+"; Path=/")
		}
		io.WriteString(w, "see the cookies")
	case "location":
		q := url.Values{}
		for _, e := range hostileEncodings {
			q.Set(e.name, e.enc(v))
		}
		h.Set("Location", "https://elsewhere.example/land?"+q.Encode()+"&raw2="+v)
		w.WriteHeader(http.StatusFound)
	case "json":
		m := map[string]string{}
		for _, e := range hostileEncodings {
			m[e.name] = e.enc(v)
		}
		b, _ := json.Marshal(m)
		h.Set("Content-Type", "application/json")
		w.Write(b)
	default:
		http.NotFound(w, r)
	}
}

const hostileDoc = `---
id: echoes
name: echoes
description: A hostile document, for the recorder's tests.
version: 1.0.0
requires: [campus-session]
access:
  campus: [portal, php]
---
Tools for tests.
`

// The tool asks each service to echo its session in every place; its
// result holds a part of each answer.
const hostileTool = `title: echoes
description: Everything the services echo.
effect: read
input:
  type: object
  properties:
    note: {type: string}
steps:
  - jq: '[["session", "token"][] as $v | ["body", "headers", "cookies", "location", "json"][] | {v: $v, w: .}]'
  - foreach:
      in: .
      steps:
        - request: {service: portal, path: /echo, query: {v: '${ $item.v }', w: '${ $item.w }'}}
        - jq: '{status, headers, body: (if (.body | type) == "string" then .body[0:300] else .body end)}'
    as: first
  - jq: '["body", "headers", "cookies", "location", "json"]'
  - foreach:
      in: .
      steps:
        - request: {service: php, path: /echo, query: {w: '${ $item }'}}
        - jq: '{status, headers}'
    as: php
  - request: {service: portal, path: /rotate}
  - request: {service: portal, path: /echo, query: {v: session, w: body}}
    as: after
  - jq: 'def echoes: with_entries(select(.key | startswith("x-echo") or . == "location" or . == "set-cookie"));
      {json: $first[4].body, headers: ($first[1].headers | echoes), cookies: ($first[2].headers | echoes), location: ($first[3].headers | echoes),
       php: ($php[1].headers | echoes), after: $after.body[0:200], n: ($first | length), note: $input.note}'
`

const hostileFail = `title: boom
description: Fails with what the service echoed.
effect: read
steps:
  - request: {service: portal, path: /echo, query: {v: session, w: body}}
  - fail: 'the page said ${ .body[0:400] }'
`

// harness record of a hostile tool, under two different random credentials
// of the same shape: the test file and what the command prints are the
// same once each whole credential is replaced by a marker, no encoding of
// either credential is left in them, and the file replays with harness
// test. A failed run prints the same error under both.
func TestRecordHostileEchoes(t *testing.T) {
	campus := newHostileCampus(t)
	work := t.TempDir()
	services := filepath.Join(work, "services.yaml")
	require.NoError(t, os.WriteFile(services, []byte(campus.servicesYAML()), 0o644))
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 14))
	for _, pairing := range noninterference.Pairings {
		t.Run(pairing.String(), func(t *testing.T) {
			a, b := noninterference.NewPair(rng, pairing)
			type run struct{ file, stdout, stderr, failOut, failErr string }
			record := func(cr noninterference.Creds, tag string) run {
				campus.set(cr)
				dir := filepath.Join(work, pairing.String()+tag, "echoes")
				writeFiles(t, dir, map[string]string{"PLUGIN.md": hostileDoc, "tools/all.yaml": hostileTool, "tools/boom.yaml": hostileFail})
				secrets := filepath.Join(work, pairing.String()+tag, "secrets.yaml")
				require.NoError(t, os.WriteFile(secrets, []byte(secretsYAML(cr)), 0o600))
				env := map[string]string{"HARNESS_HOME": filepath.Join(work, pairing.String()+tag, "home"), "HARNESS_NOW": "2026-05-01T08:00:00Z"}
				code, out, errs := runHarness(env, "record", dir, "all", "--trace", "--services", services, "--secrets", secrets,
					"--name", "echoes of "+eachByte(cr["session"], "&#x%x;"), "--input", `{"note": "`+eachByte(cr["session"], "&#%d;")+` `+base64.StdEncoding.EncodeToString([]byte(cr["token"]))+`"}`)
				require.Equal(t, 0, code, "%s%s", out, errs)
				text, err := os.ReadFile(filepath.Join(dir, "tests", "all.yaml"))
				require.NoError(t, err)
				campus.set(cr) // the rotated session was the recorded run's
				code, fout, ferrs := runHarness(env, "record", dir, "boom", "--services", services, "--secrets", secrets)
				require.Equal(t, 1, code, "%s%s", fout, ferrs)

				// The case replays, with nothing of the campus reached.
				campus.set(nil)
				code, tout, terrs := runHarness(env, "test", dir, "--services", services)
				assert.Equal(t, 0, code, "the recorded case replays: %s%s\n%s", tout, terrs, text)
				// The folder and the trace's durations are not what is compared.
				fix := func(s string) string {
					return durations.ReplaceAllString(strings.ReplaceAll(s, filepath.Join(work, pairing.String()+tag), "WORK"), "T")
				}
				return run{string(text), fix(out), fix(errs), fix(fout), fix(ferrs)}
			}
			ra, rb := record(a, "-a"), record(b, "-b")
			for _, x := range []struct {
				what   string
				va, vb string
			}{{"the test file", ra.file, rb.file}, {"stdout", ra.stdout, rb.stdout}, {"stderr", ra.stderr, rb.stderr},
				{"a failed run's stdout", ra.failOut, rb.failOut}, {"a failed run's stderr", ra.failErr, rb.failErr}} {
				ma, mb := markCreds(a, x.va), markCreds(b, x.vb)
				assert.Equal(t, ma, mb, "%s depends on the credentials", x.what)
				for _, cr := range []noninterference.Creds{a, b} {
					for _, v := range []string{cr["session"], cr["token"], cr["php"], cr["ticket"]} {
						if f := findForm(x.va+x.vb, v); f != "" {
							t.Errorf("%s holds the credential %q as %s:\n%s", x.what, v, f, x.va)
						}
					}
				}
			}
			assert.Contains(t, ra.file, "[redacted]", "the exchanges hold what the steps saw")
			assert.Contains(t, ra.failErr, "the page said", "the failed run's message")
		})
	}
}

var durations = regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?(µs|ms|s)\b`)

// markCreds replaces each whole credential of cr by a marker naming it.
func markCreds(cr noninterference.Creds, s string) string {
	names := []string{"session", "token", "php", "ticket"}
	slices.SortFunc(names, func(x, y string) int { return len(cr[y]) - len(cr[x]) })
	var pairs []string
	for _, n := range names {
		pairs = append(pairs, cr[n], "«"+n+"»")
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// findForm names a form of v that s holds ("" for none): each encoding
// the hostile services write, and base64 fragments at any alignment.
func findForm(s, v string) string {
	for _, e := range hostileEncodings {
		if f := e.enc(v); len(f) >= 4 && strings.Contains(s, f) {
			return e.name
		}
	}
	for _, f := range []string{url.QueryEscape(v), url.PathEscape(v)} {
		if strings.Contains(s, f) {
			return "URL escaped"
		}
	}
	for _, f := range b64Fragments(v) {
		if strings.Contains(s, f) {
			return "a base64 fragment"
		}
	}
	return ""
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
}

func runHarness(env map[string]string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

const (
	studentName = "张测试"
	studentID   = "2100012345"
)

// personalForms are forms of a personal value a page may show: raw, HTML
// character references (decimal, hex), percent escapes (either case),
// JSON \u escapes (either case), base64.
func personalForms(v string) []string {
	refs := func(format string) string {
		var b strings.Builder
		for _, r := range v {
			fmt.Fprintf(&b, format, r)
		}
		return b.String()
	}
	units := func(format string) string {
		var b strings.Builder
		for _, u := range utf16.Encode([]rune(v)) {
			fmt.Fprintf(&b, format, u)
		}
		return b.String()
	}
	return []string{v, refs("&#%d;"), refs("&#x%x;"), eachByte(v, "%%%02X"), eachByte(v, "%%%02x"),
		units(`\u%04x`), units(`\u%04X`), base64.StdEncoding.EncodeToString([]byte(v))}
}

const meTool = `title: me
description: The student, as the page shows them.
effect: read
steps:
  - request: {service: portal, path: /me}
  - html: {select: p.name}
    as: names
  - request: {service: portal, path: /me}
  - html: {select: p.sno}
  - return: '{names: $names[0:3], snos: .[0:3]}'
`

// A personal value to scrub (--scrub) is found wherever the proxy's
// redactor would find it: a page that shows the student's name and number
// in HTML character references, percent escapes, JSON escapes and base64
// is written with none of them left, and the case replays (the
// references' text read by the html step is the placeholder too).
func TestRecordScrubsEveryForm(t *testing.T) {
	campus := newHostileCampus(t)
	a, _ := noninterference.NewPair(rand.New(rand.NewPCG(1, 2)), noninterference.ShareNothing)
	campus.set(a)
	work := t.TempDir()
	services := filepath.Join(work, "services.yaml")
	secrets := filepath.Join(work, "secrets.yaml")
	require.NoError(t, os.WriteFile(services, []byte(campus.servicesYAML()), 0o644))
	require.NoError(t, os.WriteFile(secrets, []byte(secretsYAML(a)), 0o600))
	dir := filepath.Join(work, "me")
	// count reads no personal value: its recording holds the page alone.
	writeFiles(t, dir, map[string]string{"PLUGIN.md": hostileDoc, "tools/me.yaml": meTool,
		"tools/count.yaml": "title: count\ndescription: How many rows.\neffect: read\nsteps:\n  - request: {service: portal, path: /me}\n  - html: {select: p}\n  - return: length\n"})
	env := map[string]string{"HARNESS_HOME": filepath.Join(work, "home")}
	for _, tool := range []string{"count", "me"} {
		code, out, errs := runHarness(env, "record", dir, tool, "--services", services, "--secrets", secrets,
			"--scrub", studentName, "--scrub", studentID)
		require.Equal(t, 0, code, "%s%s", out, errs)
		b, err := os.ReadFile(filepath.Join(dir, "tests", tool+".yaml"))
		require.NoError(t, err)
		text := string(b)
		for _, v := range []string{studentName, studentID} {
			for i, f := range personalForms(v) {
				assert.NotContains(t, text, f, "%s: form %d of %s", tool, i, v)
			}
			for _, f := range b64Fragments(v) {
				assert.NotContains(t, text, f, "%s: a base64 fragment of %s", tool, v)
			}
		}
		if tool == "me" {
			assert.Contains(t, out, studentName, "the result on stdout is the live one")
			assert.Contains(t, text, "    expect:\n      output:\n        names:\n", "the result is the expectation")
		}
	}
	campus.set(nil)
	code, out, errs := runHarness(env, "test", dir, "--services", services)
	assert.Equal(t, 0, code, "the cases replay: %s%s", out, errs)
}
