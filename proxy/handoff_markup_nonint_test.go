package proxy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A session header may hold any printable byte (a secrets file's
// Authorization value, a Digest answer): quotes, "<", "&". A campus page
// that shows the step's text beside the session lets the step choose what
// stands right before the session's first byte: `{"token":` makes a quote
// there open a token field, `location.href=` a script navigation, a query
// `token=` a parameter that a "&" in the session would end. The hand-off
// scan reads the answer as the step sees it, each credential already one
// marker, so what it registers and refuses is the same whatever bytes the
// session holds: for two random sessions of the same alphabet every
// answer, error and redaction reads the same once each session is a
// marker.
func TestHandoffScanIgnoresCredentialBytes(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		q, z := r.URL.Query().Get("q"), r.URL.Query().Get("z")
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
		case "/html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		case "/header":
			w.Header().Set("X-Next", q+a+z)
			w.Header().Set("Link", "<"+q+a+z+">; rel=next")
			return
		case "/location":
			w.Header().Set("Location", q+a+z)
			w.WriteHeader(http.StatusSeeOther)
			return
		}
		fmt.Fprint(w, q+a+z)
	})
	type probe struct{ path, q, z string }
	long := strings.Repeat("x", 9000)
	probes := []probe{
		{"/json", `{"token":`, ``},
		{"/json", `{"token":`, `"}`},
		{"/json", `{"token":"`, ``},
		{"/json", `{"token":"abcdefgh`, `"}`},
		{"/json", `{"ticket": `, long + `"}`},
		{"/html", `<script>location.href=`, long + `'</script>`},
		{"/html", `<script>location.href=`, `x/y?ticket=abcdefgh12345678"</script>`},
		{"/html", `<script>location.href='/next?token=`, `'</script>`},
		{"/html", `<meta http-equiv=refresh content=`, `>`},
		{"/html", `<meta http-equiv=refresh content="0; url=/x?token=`, `">`},
		{"/html", `<form action=/x><input type=hidden name=token value=`, `></form><script>f.submit()</script>`},
		{"/html", `<form action=/x><input type=hidden name=token value="`, `"></form><script>f.submit()</script>`},
		{"/header", `token=`, ``},
		{"/header", `/next?token=`, `&x=1`},
		{"/header", `a="`, `"`},
	}
	// A redirect is decided on its Location as the step sees it. Only a
	// session whose own bytes break the rules (a ";", which the query
	// rules refuse, after the step's "?token=") leaves it unfollowed
	// where another is followed: the location probes draw sessions
	// without one. ("/iaaa/logi" before an "n" was a login redirect.)
	locations := []probe{
		{"/location", `/next?token=`, ``},
		{"/location", `/next?ticket=`, `#t`},
		{"/location", `/iaaa/logi`, ``},
		{"/location", `/next?a=1&token=`, `&b=2`},
	}
	observe := func(session string, probes []probe) string {
		cat := Catalogue{"portal": &Service{Name: "portal", Origin: srv.URL, Auth: Auth{Headers: []string{"Authorization"}},
			Login: Login{Redirect: "/iaaa/login"}}}
		if err := cat.Validate(); err != nil {
			t.Fatal(err)
		}
		ks := MemKeystore(Secrets{"portal": {Headers: map[string]string{"Authorization": session}}})
		call := New(Config{Catalogue: cat, Keystore: ks}).NewCall("d", access("portal"))
		var b strings.Builder
		for _, p := range probes {
			resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: p.path, Query: map[string][]string{"q": {p.q}, "z": {p.z}}})
			if err != nil {
				fmt.Fprintf(&b, "%s %.40q: error %v\n", p.path, p.q, err)
				continue
			}
			fmt.Fprintf(&b, "%s %.40q: %d %.200q %q %q\n", p.path, p.q, resp.Status, resp.Body, resp.Header.Get("X-Next"), resp.Header.Get("Location"))
		}
		// What the step writes and reads back: pieces of the session's
		// neighbourhood as the pages cut them.
		for _, g := range []string{"abcdefgh", "abcdefgh12345678", "x/y", "0; url=/x"} {
			fmt.Fprintf(&b, "%s -> %s\n", g, call.Redact(g))
		}
		return strings.ReplaceAll(b.String(), session, "<SESSION>")
	}
	// The alphabet of a header value, markup and separators included.
	const alphabet = `"'<>&=;,?#/ abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789` + "`"
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(first byte) string {
		b := []byte{first}
		for len(b) < 40 {
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		b[len(b)-1] = 'q' // no trailing white space
		return string(b)
	}
	type pair struct{ a, b string }
	var runs []struct {
		probes []probe
		pair
	}
	for _, first := range []byte(`"'<>&=;,?#n` + "`") {
		runs = append(runs, struct {
			probes []probe
			pair
		}{probes, pair{draw('k'), draw(first)}})
		a, b := draw('k'), draw(first)
		if first != ';' {
			a, b = strings.ReplaceAll(a, ";", "-"), strings.ReplaceAll(b, ";", "-")
			runs = append(runs, struct {
				probes []probe
				pair
			}{locations, pair{a, b}})
		}
	}
	// The residue, stated: a ";" in the session after "?token=" leaves
	// the redirect to the step (its Location redacted), where a session
	// without one is followed; never an error, never the session shown.
	semi := observe("abc;defghijklmnop", locations[:1])
	plain := observe("abc-defghijklmnop", locations[:1])
	assert.Contains(t, semi, `303 "" "" "/next?token=[redacted]"`)
	assert.Contains(t, plain, `200 "[redacted]"`)
	for _, r := range runs {
		base, got := observe(r.a, r.probes), observe(r.b, r.probes)
		if !assert.Equal(t, base, got, "sessions %q and %q", r.a, r.b) {
			bl, gl := strings.Split(base, "\n"), strings.Split(got, "\n")
			for i := range bl {
				if i < len(gl) && bl[i] != gl[i] {
					t.Logf("first difference:\n%s\n%s", bl[i], gl[i])
					break
				}
			}
		}
	}
}
