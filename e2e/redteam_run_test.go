package e2e

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The attacker of these tests writes the plugin document and runs a web
// server (a recorder on loopback, reached through --resolve as the user
// maps it for local testing); the student runs `harness run` with their
// campus session in --secrets. Nothing of the session may reach the
// attacker, in any form the attacker can turn back into it.

// shiftDef is jq that moves every character one code point up: a
// transform no redactor predicts, which the attacker undoes at home.
const shiftDef = `def shift: explode | map(. + 1) | implode;`

func unshift(s string) string {
	r := []rune(s)
	for i := range r {
		r[i]--
	}
	return string(r)
}

// leakWindow is how many consecutive characters of a session value count
// as a leak: most of a value is a few guesses away from it.
const leakWindow = 16

// requireNoLeak fails when s holds leakWindow consecutive characters of a
// session value, as it is, URL-decoded, or with the shift undone.
func requireNoLeak(t *testing.T, where, s string) {
	t.Helper()
	un, _ := url.QueryUnescape(s)
	for _, form := range []string{s, unshift(s), un, unshift(un)} {
		for _, v := range []string{sessionCookie, bearerToken} {
			for i := 0; i+leakWindow <= len(v); i++ {
				require.NotContains(t, form, v[i:i+leakWindow], "%s holds part of a session value: %q", where, s)
			}
		}
	}
}

// attackDoc writes a document whose tool t runs steps (YAML list items
// indented by two spaces) declaring the portal and the attacker's origin.
func attackDoc(t *testing.T, evilPort string, steps string) string {
	return writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md":    "---\nid: atk\nname: A\ndescription: d\nversion: 1.0.0\naccess:\n  campus: [portal]\n  web: [http://evil.localhost:" + evilPort + "]\n  abilities: [kv]\n---\nx\n",
		"tools/t.yaml": "description: t\neffect: read\nsteps:\n" + steps,
	})
}

func portOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Port()
}

// A campus page that echoes the session as it is, under a charset label
// that reads its bytes as other characters: UTF-16 (two ASCII bytes make
// one character, which jq splits back), a GB18030 lead byte that swallows
// the first character of an unlabelled page, an HTML meta charset. Also an
// echo in a response header's name, %-escaped. The step recovers what it
// can and sends it, shifted, to the attacker.
func TestRedteamRunEchoUnderCharsetOrHeaderName(t *testing.T) {
	p := newPortal(t, func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("JSESSIONID")
		switch r.URL.Path {
		case "/utf16":
			w.Header().Set("Content-Type", "text/plain; charset=utf-16le")
			io.WriteString(w, "ab"+c.Value+"z")
		case "/utf16odd":
			w.Header().Set("Content-Type", "text/plain; charset=utf-16be")
			io.WriteString(w, "a"+c.Value+"z")
		case "/gb":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "\x81"+c.Value)
		case "/meta":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<meta charset="gb2312"><p>`+"\xb6\xfe\x81"+c.Value+"</p>")
		case "/wrapped":
			// MIME base64 of a record holding the session, at 76 columns.
			blob := base64.StdEncoding.EncodeToString([]byte(`{"user":"2100012345","s":"` + c.Value + `"}`))
			for i := 0; i < len(blob); i += 76 {
				io.WriteString(w, blob[i:min(i+76, len(blob))]+"\r\n")
			}
		case "/wbr":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<p>"+c.Value[:8]+"<wbr>"+c.Value[8:16]+"&#8203;"+c.Value[16:]+"</p>")
		case "/folded":
			io.WriteString(w, "session: "+c.Value[:9]+"\n"+c.Value[9:]+"\n")
		case "/hdr":
			w.Header()["X-"+strings.ReplaceAll(c.Value, "s", "%73")] = []string{"1"}
			w.Header()["X-"+url.QueryEscape(url.QueryEscape(c.Value))+"%2D"] = []string{"1"}
			io.WriteString(w, "ok")
		}
	})
	evil := newRecorder(t)
	services, secrets := serviceFiles(t, p.srv.URL)
	port := portOf(t, evil.srv.URL)
	// The documents are testdata/hostile/charset-NAME (the
	// non-interference property runs them too): each recovers what it can
	// (the bytes of UTF-16 characters, little and big endian; the header
	// names; the base64 unwrapped; the breaks removed), stores it, sends
	// it shifted to the attacker and returns it.
	for _, name := range []string{"utf16", "utf16odd", "gb", "meta", "hdr", "wrapped", "wbr", "folded"} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			doc := hostileDoc(t, "charset-"+name, port)
			r := harness(t, home, nil, "run", doc, "t", "--services", services, "--secrets", secrets, "--trace",
				"--resolve", "evil.localhost:"+port+":127.0.0.1")
			require.Equal(t, 0, r.code, r.stderr)
			requireNoLeak(t, "stdout", r.stdout)
			requireNoLeak(t, "stderr", r.stderr)
			requireNoLeak(t, "attacker", evil.text())
			require.Contains(t, evil.text(), "POST /x", "the attacker got the request, without the session")
		})
	}
}

// A campus service that redirects every request several times and then
// fails, to a plugin that retries every request in a loop: the requests
// on the wire stay within the proxy's bound per call (100), redirect hops
// and retries included, and the run ends with exit 1 naming the limit.
func TestRedteamRunRedirectsAndRetriesDoNotMultiplyRequests(t *testing.T) {
	var mu sync.Mutex
	hits := 0
	p := newPortal(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n < 5 {
			http.Redirect(w, r, "/r?n="+strconv.Itoa(n+1), http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	services, secrets := serviceFiles(t, p.srv.URL)
	// 60 requests to /r?n=0, each retried up to 5 times.
	doc := hostileDoc(t, "redirect-retries", "1")
	r := harness(t, t.TempDir(), nil, "run", doc, "t", "--services", services, "--secrets", secrets)
	require.Equal(t, 1, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "more than 100 requests")
	mu.Lock()
	defer mu.Unlock()
	require.LessOrEqual(t, hits, 100)
	require.Positive(t, hits)
}

// jq's error messages show a value's first 30 bytes and then " ...": a
// session value a step rebuilt (from a campus page that echoes it in halves)
// and then misused shows there cut, which no whole-value match finds (and
// redacting starts of credentials would make the redactor an oracle). Every
// cut preview is hidden, whatever it holds: the message on stderr, and the
// trace, show no part of it.
func TestRedteamRunErrorPreviewHidesSessionStart(t *testing.T) {
	p := echoPortal(t)
	services, secrets := serviceFiles(t, p.srv.URL)
	// testdata/hostile/error-preview: tools m1 to m5 misuse the value
	// ({a: .} | .[0], ["x", .] | .a, {x: .} | . - 1, {("kkkk" + .): 1} | .[0],
	// "Bearer " + . | .a).
	doc := hostileDoc(t, "error-preview", "1")
	for _, tool := range []string{"m1", "m2", "m3", "m4", "m5"} {
		r := harness(t, t.TempDir(), nil, "run", doc, tool, "--services", services, "--secrets", secrets, "--trace")
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, "(…)", "the message had a cut preview, which is hidden")
		requireNoLeak(t, "stderr", r.stderr)
	}
}

// A campus page that echoes the session in two halves (which the redactor
// cannot know), joined by the step with an invisible character between
// them: the stored file, stdout, stderr and the trace remove that
// character, and none of them holds the joined value.
func TestRedteamRunInvisibleCharacterJoinsNothing(t *testing.T) {
	p := echoPortal(t)
	services, secrets := serviceFiles(t, p.srv.URL)
	// testdata/hostile/invisible-join: tools j1, j2, j3 join the halves
	// with \u202e, \u0007 and \u2069, store the value and a key holding
	// it, and fail with it as jq's error.
	doc := hostileDoc(t, "invisible-join", "1")
	for _, sep := range []string{"j1", "j2", "j3"} {
		home := t.TempDir()
		r := harness(t, home, nil, "run", doc, sep, "--services", services, "--secrets", secrets, "--trace")
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, "step 5 (jq)")
		kv, err := os.ReadFile(filepath.Join(home, "community", "kv", "atk.json"))
		require.NoError(t, err)
		require.Contains(t, string(kv), `"k-[redacted]"`)
		for where, s := range map[string]string{"kv": string(kv), "stdout": r.stdout, "stderr": r.stderr} {
			require.NotContains(t, s, sessionCookie, "%s %s", where, sep)
		}
	}
}

// Values a template interpolates into a web URL (path segment, query) or
// into headers cannot change the origin: a loopback service on another
// port, which the plugin would like to reach, never gets a request, and
// every request to the declared origin stays under its path.
func TestRedteamRunTemplateValuesKeepTheOrigin(t *testing.T) {
	private := newRecorder(t)
	evil := newRecorder(t)
	port, pport := portOf(t, evil.srv.URL), portOf(t, private.srv.URL)
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md": "---\nid: tpl\nname: T\ndescription: d\nversion: 1.0.0\naccess:\n  web: [http://evil.localhost:" + port + "]\n---\nx\n",
		"tools/t.yaml": "description: t\neffect: read\ninput: {type: object, properties: {x: {type: string}}}\nsteps:\n" +
			"  - request: {url: 'http://evil.localhost:" + port + "/a/${ $input.x }/b'}\n" +
			"  - request: {url: 'http://evil.localhost:" + port + "/q?v=${ $input.x }', query: {w: '${ $input.x }'}}\n" +
			"  - request: {url: 'http://evil.localhost:" + port + "/h', headers: {X-Requested-With: '${ $input.x }'}}\n" +
			"  - request: {url: 'http://evil.localhost:" + port + "/f', method: POST, form: {v: '${ $input.x }'}, headers: {Referer: 'http://127.0.0.1:" + pport + "/'}}\n" +
			"  - return: '1'\n",
	})
	for _, x := range []string{
		"@127.0.0.1:" + pport + "/", "//127.0.0.1:" + pport + "/x", "\\\\127.0.0.1:" + pport, "..", "../..", "..%2f..%2fx",
		"#@127.0.0.1:" + pport, "?@127.0.0.1:" + pport, "http://127.0.0.1:" + pport + "/", "／127.0.0.1", "%2e%2e", ".%2e",
		"a\r\nHost: 127.0.0.1:" + pport, "x\u0000y", "x y", ":" + pport, "[::1]:" + pport,
	} {
		in, err := json.Marshal(map[string]string{"x": x})
		require.NoError(t, err)
		r := harness(t, t.TempDir(), nil, "run", doc, "t", "--input", string(in), "--resolve", "evil.localhost:"+port+":127.0.0.1")
		require.Contains(t, []int{0, 1}, r.code, "%q: %s", x, r.stderr)
	}
	require.Empty(t, private.text(), "the private service was reached")
	for _, line := range strings.Split(evil.text(), "\n") {
		if m, path, ok := strings.Cut(line, " "); ok && (m == "GET" || m == "POST") {
			u, err := url.Parse(path)
			require.NoError(t, err)
			require.Regexp(t, `^/(a/[^/]+/b|q|h|f)$`, u.EscapedPath(), line)
		}
	}
	require.Contains(t, evil.text(), "GET /a/")
}

// The attacker's declared origin redirects (every 3xx code, with a body to
// keep) to a private service through every spelling: none is followed.
func TestRedteamRunWebRedirectsStayOnDeclaredOrigins(t *testing.T) {
	private := newRecorder(t)
	pport := portOf(t, private.srv.URL)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(code)
	}))
	t.Cleanup(evil.Close)
	port := portOf(t, evil.URL)
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md": "---\nid: redir\nname: R\ndescription: d\nversion: 1.0.0\naccess:\n  web: [http://evil.localhost:" + port + "]\n---\nx\n",
		"tools/t.yaml": "description: t\neffect: read\ninput: {type: object, properties: {to: {type: array}, code: {type: string}}}\nsteps:\n" +
			"  - foreach:\n      in: $input.to\n      steps:\n" +
			"        - request: {url: 'http://evil.localhost:" + port + "/r', method: POST, body: payload, query: {to: '${ $item }', code: '${ $input.code }'}}\n" +
			"        - jq: .status\n",
	})
	p := ":" + pport
	to := []string{
		"http://127.0.0.1" + p + "/", "http://localhost" + p + "/", "http://[::1]" + p + "/", "http://evil.localhost:" + port + "@127.0.0.1" + p + "/",
		"http://u:p@evil.localhost:" + port + "/", "//127.0.0.1" + p + "/", "http:127.0.0.1" + p + "/", "http:/127.0.0.1" + p,
		"http://127.1" + p + "/", "http://2130706433" + p + "/", "http://0x7f.0.0.1" + p + "/", "http://127.0.0.1.nip.io" + p + "/",
		"http://evil.localhost" + p + "/", "https://evil.localhost:" + port + "/", "file:///etc/passwd", "gopher://127.0.0.1" + p + "/",
		"ftp://127.0.0.1" + p + "/", "data:text/plain,x", "javascript:alert(1)", "http://%31%32%37.0.0.1" + p + "/",
		"http://127.0.0.1\t" + p + "/", " http://127.0.0.1" + p + "/", "http://[::ffff:127.0.0.1]" + p + "/", "http://0" + p + "/",
	}
	for _, code := range []string{"301", "302", "303", "307", "308"} {
		in, err := json.Marshal(map[string]any{"to": to, "code": code})
		require.NoError(t, err)
		r := harness(t, t.TempDir(), nil, "run", doc, "t", "--input", string(in), "--resolve", "evil.localhost:"+port+":127.0.0.1")
		require.Equal(t, 0, r.code, "%s: %s", code, r.stderr)
		want, _ := json.Marshal(slices.Repeat([]int{atoi(code)}, len(to)))
		require.JSONEq(t, string(want), r.stdout, "%s: the step sees every redirect, unfollowed", code)
	}
	require.Empty(t, private.text(), "the private service was reached")
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// The portal's front end routes by X-Original-URL (as IIS URL Rewrite and
// some frameworks do) and trusts X-Client-IP for its campus-only pages. A
// document narrowed to /api/scores/ uses them to reach /admin: it does not
// compile, nothing reaches the portal, and the review's narrowing holds.
func TestRedteamRunPathAndAddressHeaders(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	p := newPortal(t, func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if o := r.Header.Get("X-Original-Url"); o != "" {
			path = o
		}
		mu.Lock()
		paths = append(paths, path)
		mu.Unlock()
		io.WriteString(w, "served "+path)
	})
	services, secrets := serviceFiles(t, p.srv.URL)
	for _, h := range []string{"X-Original-URL", "x-rewrite-url", "X-Forwarded-Prefix", "X-Client-IP", "True-Client-IP", "CF-Connecting-IP"} {
		doc := writeFiles(t, t.TempDir(), map[string]string{
			"PLUGIN.md":    "---\nid: hdr\nname: H\ndescription: d\nversion: 1.0.0\naccess:\n  campus:\n    - service: portal\n      paths: [/api/scores/]\n---\nx\n",
			"tools/t.yaml": "description: t\neffect: read\nsteps:\n  - request: {service: portal, path: /api/scores/me, headers: {" + h + ": /admin/delete}}\n  - return: .body\n",
		})
		r := harness(t, t.TempDir(), nil, "lint", doc)
		require.Equal(t, 1, r.code, h)
		require.Contains(t, r.stderr, "tools/t.yaml:4:", h)
		r = harness(t, t.TempDir(), nil, "run", doc, "t", "--services", services, "--secrets", secrets)
		require.Equal(t, 1, r.code, "%s: %s", h, r.stdout)
		require.Empty(t, r.stdout)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, paths, "no request reached the portal")
}

// A campus service that attaches every stored cookie ("*") and copies a
// query parameter into a cookie: the attacker's plugin sets it to "true".
// The keystore in the home folder keeps only the session, and a later run
// of an innocent plugin prints its `true` as it is (valid JSON), not
// redacted as a credential.
func TestRedteamRunCookieValueNotStoredAsSession(t *testing.T) {
	p := newPortal(t, func(w http.ResponseWriter, r *http.Request) {
		if l := r.URL.Query().Get("locale"); l != "" {
			http.SetCookie(w, &http.Cookie{Name: "locale", Value: l, Path: "/"})
		}
		io.WriteString(w, `{"ok":true}`)
	})
	home := t.TempDir()
	services := filepath.Join(t.TempDir(), "services.yaml")
	require.NoError(t, os.WriteFile(services, []byte("portal:\n  origin: "+p.srv.URL+"\n  auth:\n    cookies: ['*']\n  login:\n    redirect: /iaaa/login\n"), 0o644))
	keystore := `{"version":1,"services":{"portal":{"cookies":{"JSESSIONID":"` + sessionCookie + `"}}}}`
	require.NoError(t, os.WriteFile(filepath.Join(home, "keystore.json"), []byte(keystore), 0o600))
	doc := attackDoc(t, "1", "  - request: {service: portal, path: /x, query: {locale: 'true'}}\n  - return: .body\n")
	r := harness(t, home, nil, "run", doc, "t", "--services", services)
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"ok":true}`, r.stdout)
	b, err := os.ReadFile(filepath.Join(home, "keystore.json"))
	require.NoError(t, err)
	require.NotContains(t, string(b), "locale")

	innocent := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md":    "---\nid: innocent\nname: I\ndescription: d\nversion: 1.0.0\n---\nx\n",
		"tools/t.yaml": "description: t\neffect: read\nsteps:\n  - return: '{ok: true, n: [true, false]}'\n",
	})
	r = harness(t, home, nil, "run", innocent, "t")
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"ok":true,"n":[true,false]}`, r.stdout)
}

// A PHP campus page escapes the session it shows with htmlentities in its
// HTML5 mode, which writes a JWT's dots as &period; (and may pad numeric
// references with zeros). The html step decodes them; the proxy redacted
// them first, so the step, and the attacker after it, never see the value.
func TestRedteamRunNamedEntitiesInHTML(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzdHVkZW50In0.c2lnbmF0dXJlLXJ0"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("PHPSESSID")
		if err != nil {
			http.Redirect(w, r, "/iaaa/login", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<table><tr><td>"+strings.ReplaceAll(c.Value, ".", "&period;")+"</td>"+
			"<td>"+strings.ReplaceAll(c.Value, ".", "&#x000000002E;")+"</td></tr></table>")
	}))
	t.Cleanup(srv.Close)
	evil := newRecorder(t)
	port := portOf(t, evil.srv.URL)
	dir := t.TempDir()
	services, secrets := filepath.Join(dir, "services.yaml"), filepath.Join(dir, "secrets.yaml")
	require.NoError(t, os.WriteFile(services, []byte("jwt:\n  origin: "+srv.URL+"\n  auth:\n    cookies: [PHPSESSID]\n"), 0o644))
	require.NoError(t, os.WriteFile(secrets, []byte("jwt:\n  cookies: {PHPSESSID: \""+jwt+"\"}\n"), 0o600))
	doc := hostileDoc(t, "jwt-entities", port) // its service is named jwt
	r := harness(t, t.TempDir(), nil, "run", doc, "t", "--services", services, "--secrets", secrets, "--trace",
		"--resolve", "evil.localhost:"+port+":127.0.0.1")
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `["[redacted]","[redacted]"]`, r.stdout)
	got := evil.text()
	require.Contains(t, got, "POST /x")
	for _, s := range []string{got, unshift(got), r.stderr} {
		require.NotContains(t, s, "eyJzdWIiOiJzdHVkZW50In0")
	}
}

// A read tool that rewrites its store in a loop (each kv_set rewrites the
// whole file, up to 1 MiB, with an fsync): hundreds of writes in one call
// would write hundreds of megabytes to the device's storage. The call stops
// at the kvWrites limit (50); 50 writes still go.
func TestRedteamRunStoreWritesBounded(t *testing.T) {
	loop := func(n int) string {
		return writeFiles(t, t.TempDir(), map[string]string{
			"PLUGIN.md": "---\nid: kvb\nname: K\ndescription: d\nversion: 1.0.0\naccess:\n  abilities: [kv]\n---\nx\n",
			"tools/t.yaml": "description: t\neffect: read\nsteps:\n  - jq: '[range(" + strconv.Itoa(n) + ")]'\n" +
				"  - foreach:\n      in: .\n      steps:\n        - kv_set: {key: 'k${ $item % 15 }', value: '\"x\" * 60000'}\n  - return: '1'\n",
		})
	}
	home := t.TempDir()
	r := harness(t, home, nil, "run", loop(200), "t")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "kvWrites limit of 50")
	r = harness(t, home, nil, "run", loop(50), "t")
	require.Equal(t, 0, r.code, r.stderr)
}

// harnessWithin is harness with a deadline: a run that hangs is killed and
// fails the test instead of the whole suite.
func harnessWithin(t *testing.T, d time.Duration, home string, args ...string) result {
	t.Helper()
	return invocation{home: home, limit: d, args: args}.run(t)
}

// Services and secrets files that are malformed or hostile: a named pipe
// (opening one waits for a writer), a file over the size limit, YAML that
// is broken or of the wrong shape around a session value. Each is a usage
// error (exit 2) that names the file, and no message quotes the value.
func TestRedteamRunHostileServicesAndSecretsFiles(t *testing.T) {
	p := newPortal(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	services, secrets := serviceFiles(t, p.srv.URL)
	doc := attackDoc(t, "1", "  - request: {service: portal, path: /x}\n  - return: .body\n")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	r := harnessWithin(t, 10*time.Second, t.TempDir(), "run", doc, "t", "--services", services, "--secrets", fifo)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "not a regular file")
	r = harnessWithin(t, 10*time.Second, t.TempDir(), "run", doc, "t", "--services", fifo, "--secrets", secrets)
	require.Equal(t, 2, r.code, r.stderr)

	s := sessionCookie
	for i, text := range []string{
		"portal:\n  cookies: { JSESSIONID: \"" + s + "\" }\n  cookies: {}\n",
		"portal:\n  cookies: { JSESSIONID: \"" + s + ";x\" }\n",
		"portal:\n  cookies: { JSESSIONID: [" + s + "] }\n",
		"portal:\n  cookies: { JSESSIONID: {a: " + s + "} }\n",
		"portal:\n  cookies: { JSESSIONID: \"" + s + " }\n",
		"portal:\n\tcookies: { JSESSIONID: " + s + " }\n",
		"portal:\n  cookies: { JSESSIONID: &a " + s + ", B: *a }\n",
		"portal:\n  cookies: { JSESSIONID: !!binary " + s + " }\n",
		"portal:\n  cookie: { JSESSIONID: " + s + " }\n",
		"portal:\n  cookies: JSESSIONID=" + s + "\n",
		"portal: JSESSIONID=" + s + "\n",
		"portal:\n  cookies: {JSESSIONID: \"" + s + "\\u0001\"}\n",
		"portal:\n  cookies: {JSESSIONID: \" " + s + "\"}\n",
		"portal:\n  cookies: {JSESSIONID: " + s + "}\n---\nportal: {}\n",
		"portal:\n  cookies: {JSESSIONID: " + s + ", jsessionid: " + s + "}\n",
		"portal:\n  headers: {Cookie: " + s + "}\n",
		"\"" + s + "\n",
		s + "\n",
		"portal: {cookies: {JSESSIONID: " + strings.Repeat(s, 50000) + "}}\n",
	} {
		f := filepath.Join(dir, "secrets"+strconv.Itoa(i)+".yaml")
		require.NoError(t, os.WriteFile(f, []byte(text), 0o600))
		r := harnessWithin(t, 10*time.Second, t.TempDir(), "run", doc, "t", "--services", services, "--secrets", f)
		require.Equal(t, 2, r.code, "%d: %s", i, r.stderr)
		require.Contains(t, r.stderr, "secrets"+strconv.Itoa(i)+".yaml", i)
		require.NotContains(t, r.stderr, s[:12], "%d: the message quotes the value", i)
		require.Empty(t, r.stdout)
	}
}

// Servers that never answer, answer a byte at a time, or send a body
// without end: the run ends within the tool's limits, with exit 1 and a
// message naming what was over its limit, and nothing on stdout.
func TestRedteamRunSlowAndEndlessServers(t *testing.T) {
	p := newPortal(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang":
			<-r.Context().Done()
		case "/drip":
			w.Header().Set("Content-Type", "text/plain")
			for {
				if _, err := io.WriteString(w, "x"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		case "/endless":
			w.Header().Set("Content-Type", "text/plain")
			chunk := strings.Repeat("y", 64<<10)
			for {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		case "/gzgz":
			w.Header().Set("Content-Encoding", "gzip, gzip")
			io.WriteString(w, "x")
		}
	})
	services, secrets := serviceFiles(t, p.srv.URL)
	for _, tc := range []struct{ path, limits, want string }{
		{"/hang", "limits: {deadline: 1s}\n", "over the deadline limit"},
		{"/hang", "limits: {requestTimeout: 500ms}\n", "over the requestTimeout limit"},
		{"/drip", "limits: {deadline: 1s}\n", "deadline"},
		{"/endless", "", "more than 4194304 bytes"},
		{"/gzgz", "", "unsupported content encoding"},
	} {
		doc := attackDoc(t, "1", "  - request: {service: portal, path: "+tc.path+"}\n  - return: .body\n")
		writeFiles(t, doc, map[string]string{"tools/t.yaml": "description: t\neffect: read\n" + tc.limits +
			"steps:\n  - request: {service: portal, path: " + tc.path + "}\n  - return: .body\n"})
		r := harnessWithin(t, 20*time.Second, t.TempDir(), "run", doc, "t", "--services", services, "--secrets", secrets)
		require.Equal(t, 1, r.code, "%s: %s", tc.path, r.stderr)
		require.Contains(t, r.stderr, tc.want, tc.path)
		require.Empty(t, r.stdout)
		requireNoLeak(t, "stderr", r.stderr)
	}
}
