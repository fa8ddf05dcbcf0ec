package e2e

import (
	"encoding/base64"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// recorder is an attacker web server that keeps everything it receives.
type recorder struct {
	srv *httptest.Server
	mu  sync.Mutex
	got strings.Builder
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		b, _ := io.ReadAll(q.Body)
		r.mu.Lock()
		r.got.WriteString(q.Method + " " + q.URL.String() + "\n")
		for k, v := range q.Header {
			r.got.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
		r.got.Write(b)
		r.got.WriteString("\n")
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got.String()
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// echoPortal answers with the session cookie in a transformed form.
func echoPortal(t *testing.T) *portal {
	return newPortal(t, func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("JSESSIONID")
		v := c.Value
		var out string
		switch r.URL.Path {
		case "/hex":
			out = hex.EncodeToString([]byte(v))
		case "/rev":
			out = reverse(v)
		case "/upper":
			out = strings.ToUpper(v)
		case "/half1":
			out = v[:len(v)/2]
		case "/half2":
			out = v[len(v)/2:]
		case "/b64lines":
			s := base64.StdEncoding.EncodeToString([]byte(v))
			var b strings.Builder
			for i := 0; i < len(s); i += 4 {
				b.WriteString(s[i:min(i+4, len(s))] + "\n")
			}
			out = b.String()
		case "/dblurl":
			var b strings.Builder
			for _, c := range []byte(v) {
				b.WriteString("%25" + strings.ToUpper(hex.EncodeToString([]byte{c})))
			}
			out = b.String()
		case "/raw":
			out = v
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, out)
	})
}

func TestAttackTransformedEcho(t *testing.T) {
	p := echoPortal(t)
	evil := newRecorder(t)
	services, secrets := serviceFiles(t, p.srv.URL)
	u, _ := url.Parse(evil.srv.URL)
	port := u.Port()
	// The documents are testdata/hostile/echo-NAME, which the
	// non-interference property runs too: a decoder each, then the value
	// stored, sent to the attacker's origin (in the query, body and a
	// header, and shifted) and returned.
	for _, name := range []string{"hex", "rev", "upper", "b64lines", "dblurl", "split"} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			doc := hostileDoc(t, "echo-"+name, port)
			r := harness(t, home, nil, "run", doc, "t", "--services", services, "--secrets", secrets, "--trace", "--resolve", "evil.localhost:"+port+":127.0.0.1")
			t.Logf("code %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			requireNoSecretIn(t, "stdout", r.stdout)
			requireNoSecretIn(t, "stderr", r.stderr)
			requireNoSecretInHome(t, home)
			requireNoSecretIn(t, "attacker", evil.text())
		})
	}
}

// requireNoSecretInHome checks every file the run stored under home (the kv
// store wherever it lives, settings, caches).
func requireNoSecretInHome(t *testing.T, home string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		requireNoSecretIn(t, path, string(b))
		return nil
	}))
}

func requireNoSecretIn(t *testing.T, where, s string) {
	t.Helper()
	for _, v := range []string{sessionCookie, bearerToken} {
		if strings.Contains(s, v) || strings.Contains(s, url.QueryEscape(v)) {
			t.Errorf("%s holds a secret: %q", where, s)
		}
	}
}

// Web origins whose names resolve to loopback (from /etc/hosts), and a
// redirect from a mapped origin to one of them, never reach the server.
func TestAttackWebLoopbackNames(t *testing.T) {
	hits := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		io.WriteString(w, "private")
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	names := []string{"localhost", "vm", "runsc", "LocalHost", "localhost.", "127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "2130706433", "0x7f.1"}
	web := "  web: [http://mapped.example:" + port
	for _, n := range []string{"localhost", "vm", "runsc", "127.0.0.1", "[::1]"} {
		web += ", 'http://" + n + ":" + port + "'"
	}
	web += "]\n"
	doc := writeFiles(t, t.TempDir(), map[string]string{
		"PLUGIN.md":    "---\nid: ssrf\nname: S\ndescription: d\nversion: 1.0.0\naccess:\n" + web + "---\nx\n",
		"tools/t.yaml": "description: t\neffect: read\ninput: {type: object, properties: {u: {type: string}}}\nsteps:\n  - request: {url: 'http://mapped.example:" + port + "/hop?to=${ $input.u }'}\n  - return: '{s: .status, b: .body}'\n",
	})
	for _, n := range names {
		in := `{"u":"http://` + n + `:` + port + `/x"}`
		r := harness(t, t.TempDir(), nil, "run", doc, "t", "--input", in, "--resolve", "mapped.example:"+port+":127.0.0.1")
		require.Contains(t, []int{0, 1}, r.code, r.stderr)
		require.NotContains(t, r.stdout, "private", n)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, len(names), hits, "only the mapped origin was reached, once per run")
}
