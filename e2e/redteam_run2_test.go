package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A PHP-like campus page that reads the session cookie decoded ($_COOKIE
// turns %XX into bytes and "+" into a space) and shows it highlighted in
// pieces (spans, a comment, an XML text in CDATA pieces) or with numeric
// references that lack their semicolon. The html and xml steps join the
// pieces and decode the references; the attacker's steps send what they
// got, shifted, to their server. Nothing of the session may arrive.
func TestRedteamRunDecodedCookieSplitByMarkup(t *testing.T) {
	const sess = "sess+Ab%2Fcd%3D%3D-0192837465abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("PHPSESSID")
		if err != nil {
			http.Redirect(w, r, "/iaaa/login", http.StatusFound)
			return
		}
		v, _ := url.QueryUnescape(c.Value) // as PHP's $_COOKIE
		a, b := v[:9], v[9:]
		if r.URL.Path == "/feed" {
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, "<r><i>"+a+"<![CDATA["+b+"]]></i><i>"+a+"<!--x-->"+b+"</i></r>")
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<table><tr><td><span class=h>"+a+"</span><span>"+b+"</span></td>"+
			"<td>"+a+"<!-- cut -->"+b+"</td><td>"+strings.ReplaceAll(v, "A", "&#65")+"</td></tr></table>")
	}))
	t.Cleanup(srv.Close)
	evil := newRecorder(t)
	port := portOf(t, evil.srv.URL)
	dir := t.TempDir()
	services, secrets := filepath.Join(dir, "services.yaml"), filepath.Join(dir, "secrets.yaml")
	require.NoError(t, os.WriteFile(services, []byte("php:\n  origin: "+srv.URL+"\n  auth:\n    cookies: [PHPSESSID]\n"), 0o644))
	require.NoError(t, os.WriteFile(secrets, []byte("php:\n  cookies: {PHPSESSID: \""+sess+"\"}\n"), 0o600))
	// testdata/hostile/php-markup: the html and xml steps' values, and
	// the feed with its tags removed, sent shifted; its service is php.
	doc := hostileDoc(t, "php-markup", port)
	r := harness(t, t.TempDir(), nil, "run", doc, "t", "--services", services, "--secrets", secrets, "--trace",
		"--resolve", "evil.localhost:"+port+":127.0.0.1")
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"s":["[redacted]","[redacted]","[redacted]"],"x":["[redacted]","[redacted]"]}`, r.stdout)
	got := evil.text()
	require.Equal(t, 2, strings.Count(got, "POST /x"), got)
	decoded, _ := url.PathUnescape(sess)
	phpDecoded, _ := url.QueryUnescape(sess)
	for _, s := range []string{got, unshift(got), r.stdout, r.stderr} {
		for _, v := range []string{sess, decoded, phpDecoded, phpDecoded[9:], "0192837465abcdef"} {
			require.NotContains(t, s, v)
		}
	}
}

// A read tool whose result holds one part many times over (an array that
// holds the one before it twice, 40 levels deep: a few hundred bytes of
// memory, 2^40 numbers as JSON) fails with a limit message and exit 1,
// traced or not, where encoding it whole would take the machine's memory
// and crash the process with an exit code outside the contract.
func TestRedteamRunSharedPartsResult(t *testing.T) {
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md": "---\nid: big\nname: B\ndescription: d\nversion: 1.0.0\n---\nx\n",
		"tools/t.yaml": "description: t\neffect: read\nsteps:\n  - jq: 'reduce range(40) as $i (1; [., .])'\n" +
			"  - return: '[., (\"x\" * 8000000) as $s | [range(4000)] | map($s)]'\n",
	})
	for _, args := range [][]string{{"run", doc, "t"}, {"run", doc, "t", "--trace"}} {
		r := invocation{home: t.TempDir(), limit: 2 * time.Minute, args: args}.run(t)
		require.Equal(t, 1, r.code, r.stderr)
		require.Empty(t, r.stdout)
		require.Contains(t, r.stderr, "the result's JSON text in bytes")
		require.Less(t, len(r.stderr), 4096)
	}
}

// The attacker's web server answers 101 Switching Protocols and then holds
// the connection open: the run still ends, with exit 1, a message, and
// nothing on stdout (the raw connection of a 101 is closed by no
// deadline, so reading it would have waited as long as the server liked).
func TestRedteamRunSwitchingProtocolsHold(t *testing.T) {
	u := rawServerHolding(t, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\nhello", time.Minute)
	port := u[strings.LastIndexByte(u, ':')+1:]
	doc := attackDoc(t, port, "  - request: {url: 'http://evil.localhost:"+port+"/ws'}\n  - return: .status\n")
	r := invocation{home: t.TempDir(), limit: 50 * time.Second,
		args: []string{"run", doc, "t", "--resolve", "evil.localhost:" + port + ":127.0.0.1"}}.run(t)
	require.Equal(t, 1, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "switched protocols")
}
