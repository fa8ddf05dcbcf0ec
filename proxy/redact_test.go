package proxy

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedactEncodings(t *testing.T) {
	const secret = "s3cr3t/Tok+en=<&>\"'é"
	r := newRedactor()
	r.add(secret)
	entAll := func(hex bool) string {
		var b strings.Builder
		for _, c := range secret {
			if hex {
				fmt.Fprintf(&b, "&#x%X;", c)
			} else {
				fmt.Fprintf(&b, "&#%d;", c)
			}
		}
		return b.String()
	}
	jsonAll := func(upper bool) string {
		var b strings.Builder
		for _, c := range secret {
			if upper {
				fmt.Fprintf(&b, "\\u%04X", c)
			} else {
				fmt.Fprintf(&b, "\\u%04x", c)
			}
		}
		return b.String()
	}
	goJSON, _ := json.Marshal(secret)
	forms := map[string]string{
		"raw":         secret,
		"query":       url.QueryEscape(secret),
		"path":        url.PathEscape(secret),
		"lower hex":   regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(url.QueryEscape(secret), strings.ToLower),
		"json go":     strings.Trim(string(goJSON), `"`),
		"json all":    jsonAll(false),
		"json upper":  jsonAll(true),
		"json slash":  strings.ReplaceAll(secret, "/", `\/`),
		"html":        html.EscapeString(secret),
		"entity dec":  entAll(false),
		"entity hex":  entAll(true),
		"mixed":       "s3c%72%33t\\/Tok&#43;en%3D&lt;&amp;&gt;&quot;&#39;\\u00e9",
		"double quot": strings.ReplaceAll(html.EscapeString(secret), "&#34;", "&quot;"),
	}
	for name, f := range forms {
		for _, wrap := range []string{"%s", "prefix %s suffix", `{"k":"%s"}`} {
			in := fmt.Sprintf(wrap, f)
			out := r.string(in)
			assert.Equal(t, fmt.Sprintf(wrap, Marker), out, "%s in %q", name, in)
			assert.Equal(t, fmt.Sprintf(wrap, Marker), string(r.bytes([]byte(in))), name)
		}
	}
	// base64 of any text holding the secret, at each alignment, both alphabets.
	for k := 0; k < 3; k++ {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			blob := enc.EncodeToString([]byte(strings.Repeat("x", k) + "user:" + secret + ":tail"))
			out := r.string("data=" + blob)
			assert.Contains(t, out, Marker, "alignment %d", k)
			// What is left cannot decode back to the secret.
			assert.NotContains(t, out, blob)
		}
	}
}

func TestRedactSchemesAndBasic(t *testing.T) {
	r := newRedactor()
	r.add("Bearer abcdefgh12345")
	r.add("Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pa55word-long")))
	assert.Equal(t, "token "+Marker, r.string("token abcdefgh12345"))
	assert.Equal(t, "pw="+Marker, r.string("pw=pa55word-long"))
	assert.Equal(t, "who="+Marker, r.string("who=alice:pa55word-long"))
	assert.Equal(t, "Bearer is a word, so is Basic", r.string("Bearer is a word, so is Basic"))
}

func TestRedactLeavesOtherTextAlone(t *testing.T) {
	r := newRedactor()
	r.add("portalSess-1a2b3c4d5e6f7a8b")
	for _, s := range []string{"", "plain text", `{"a":"b\u00e9","c":"%41%42&amp;+"}`, "portalSess-1a2b3c4d5e6f7a8", "ortalSess-1a2b3c4d5e6f7a8b"[1:]} {
		assert.Equal(t, s, r.string(s))
	}
	b := []byte("nothing here")
	assert.Same(t, &b[0], &r.bytes(b)[0], "no copy when nothing matches")
	// Adjacent and overlapping matches become one marker.
	assert.Equal(t, "a"+Marker+"b", r.string("a"+"portalSess-1a2b3c4d5e6f7a8b"+url.QueryEscape("portalSess-1a2b3c4d5e6f7a8b")+"b"))
}

func TestRedactLongestFirst(t *testing.T) {
	r := newRedactor()
	r.add("abcdef")
	r.add("abcdefghij")
	assert.Equal(t, Marker+"k", r.string("abcdefghijk"))
	assert.Equal(t, Marker+"%7A", r.string("abcdefghij%7A"))
}

func TestCallRedactIncludesKeystore(t *testing.T) {
	p := New(Config{Catalogue: Catalogue{}, Keystore: MemKeystore(testSecrets())})
	call := p.NewCall("demo", access())
	for _, s := range allSecrets {
		out := call.Redact("x " + s + " y " + url.QueryEscape(s))
		assertNoSecret(t, "redacted", out)
		require.Contains(t, out, Marker)
	}
}
