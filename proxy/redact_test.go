package proxy

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

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
	// Adjacent whole matches are a marker each (they used to merge into
	// one, and a marker that grows or merges with what is next to it
	// tells a plugin about the text it swallowed); overlapping ones, which
	// share bytes, are one marker.
	assert.Equal(t, "a"+Marker+Marker+"b", r.string("a"+"portalSess-1a2b3c4d5e6f7a8b"+url.QueryEscape("portalSess-1a2b3c4d5e6f7a8b")+"b"))
	r.add("1a2b3c4d5e6f7a8b-overlap")
	assert.Equal(t, "a"+Marker+"b", r.string("a"+"portalSess-1a2b3c4d5e6f7a8b-overlap"+"b"))
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

// FuzzRedact encodes a credential character by character in a mix of the
// forms a server may use and checks that it never survives redaction, and
// that the text around it does.
func FuzzRedact(f *testing.F) {
	f.Add("s3cr3t-session-value", []byte{0, 1, 2, 3, 4, 5}, "before ", " after")
	f.Add("Bearer t0ken/+=xyz", []byte{1, 1, 1, 3, 3, 3, 2, 2}, `{"a":"`, `"}`)
	f.Add("é中文-secret-value", []byte{2, 2, 4, 4, 0}, "", "")
	f.Fuzz(func(t *testing.T, secret string, mix []byte, pre, post string) {
		if len(secret) < 8 || len(secret) > 64 || !utf8.ValidString(secret) || len(pre) > 64 || len(post) > 64 || len(mix) == 0 {
			return
		}
		// An escape byte next to the credential changes what the escapes
		// mean (a JSON "\\" before "\u00e9" is a backslash, not é); values
		// holding escape bytes raw are covered by TestRedactEncodings.
		if strings.ContainsAny(secret+pre+post, "%\\&") {
			return
		}
		for _, c := range secret {
			if c < 0x20 || c == 0x7f || c == utf8.RuneError {
				return
			}
		}
		r := newRedactor()
		r.add(secret)
		var b strings.Builder
		i := 0
		for _, c := range secret {
			switch mix[i%len(mix)] % 5 {
			case 0:
				b.WriteRune(c)
			case 1:
				for _, x := range []byte(string(c)) {
					fmt.Fprintf(&b, "%%%02X", x)
				}
			case 2:
				if c > 0xffff {
					b.WriteRune(c)
				} else {
					fmt.Fprintf(&b, "\\u%04x", c)
				}
			case 3:
				fmt.Fprintf(&b, "&#%d;", c)
			case 4:
				fmt.Fprintf(&b, "&#x%x;", c)
			}
			i++
		}
		enc := b.String()
		out := r.string(pre + enc + post)
		// (The marker's own brackets may complete a value like "]0000".)
		if bare := strings.ReplaceAll(out, Marker, "\x00"); strings.Contains(bare, enc) || strings.Contains(bare, secret) {
			t.Fatalf("secret %q encoded as %q survived: %q", secret, enc, out)
		}
		if !strings.Contains(out, Marker) {
			t.Fatalf("no marker in %q", out)
		}
		// Text before the credential is kept when it cannot be part of one
		// (punctuation that neither the value nor base64 holds).
		if strings.Trim(pre, " {}[]\":,<>") == "" && !strings.ContainsAny(pre, secret) && !strings.HasPrefix(out, pre) {
			t.Fatalf("prefix %q damaged: %q", pre, out)
		}
	})
}

// A server may wrap a credential in two or more layers of escapes (a
// double URL encoding, a URL-encoded JSON escape, an HTML-escaped URL
// encoding): the plugin could peel them in jq, so every layer is redacted.
func TestRedactLayeredEscapes(t *testing.T) {
	const secret = "s3cr3t/Tok+en=<&>"
	r := newRedactor()
	r.add(secret)
	q := url.QueryEscape
	jsonAll := func(s string) string {
		var b strings.Builder
		for _, c := range s {
			fmt.Fprintf(&b, "\\u%04x", c)
		}
		return b.String()
	}
	for name, f := range map[string]string{
		"double url":     q(q(secret)),
		"triple url":     q(q(q(secret))),
		"url of json":    q(jsonAll(secret)),
		"html of url":    html.EscapeString(q(secret)),
		"json of url":    jsonAll(q(secret)),
		"html of double": html.EscapeString(q(q(secret))),
	} {
		for _, wrap := range []string{"%s", "prefix %s suffix", `{"k":"%s","n":"100%%25 &amp; \u00e9"}`} {
			in := fmt.Sprintf(wrap, f)
			want := fmt.Sprintf(wrap, Marker)
			assert.Equal(t, want, r.string(in), "%s in %q", name, in)
			assert.Equal(t, want, string(r.bytesInPlace([]byte(in))), name)
		}
	}
}

// A server may echo a credential in a transform a step can undo in jq with
// builtins alone: reversed (explode | reverse | implode), in upper or lower
// case (ascii_downcase), in hexadecimal. Those the proxy can predict are
// redacted like the value.
func TestRedactPredictableTransforms(t *testing.T) {
	const secret = "s3cr3t-Session-e2e-7f3a"
	r := newRedactor()
	r.add(secret)
	rev := []byte(secret)
	slices.Reverse(rev)
	for name, f := range map[string]string{
		"reversed":  string(rev),
		"upper":     strings.ToUpper(secret),
		"lower":     strings.ToLower(secret),
		"hex":       hex.EncodeToString([]byte(secret)),
		"hex upper": strings.ToUpper(hex.EncodeToString([]byte(secret))),
		"hex in":    hex.EncodeToString([]byte("cookie=" + secret + ";")),
	} {
		out := r.string("v=" + f + "!")
		assert.NotContains(t, out, f, name)
		assert.Contains(t, out, Marker, name)
	}
}

// multi.search finds what a naive search finds, at every length and
// position (the scan is split in two halves from 128 bytes on).
func TestMultiSearchMatchesNaive(t *testing.T) {
	pats := []string{"abcdefgh", "bcdefghijk", "zzzzzzzzzzzz", "abcdefghabcdefgh", "hgfedcba", "short", "xyz1"}
	var ps []pattern
	for _, p := range pats {
		ps = append(ps, pattern{s: p})
	}
	mm := newMulti(ps)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "abcdefghz"
	for n := 0; n < 400; n++ {
		for round := 0; round < 20; round++ {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			for k := rng.IntN(4); k > 0 && n > 0; k-- {
				p := pats[rng.IntN(len(pats))]
				if len(p) <= n {
					copy(b[rng.IntN(n-len(p)+1):], p)
				}
			}
			s := string(b)
			var want []span
			for _, p := range pats {
				for i := 0; i+len(p) <= len(s); i++ {
					if s[i:i+len(p)] == p {
						want = append(want, span{i, i + len(p)})
					}
				}
			}
			got := mm.search(s, nil)
			less := func(a, c span) int {
				if a.from != c.from {
					return a.from - c.from
				}
				return a.to - c.to
			}
			slices.SortFunc(want, less)
			slices.SortFunc(got, less)
			if !slices.Equal(want, got) {
				t.Fatalf("len %d %q: got %v, want %v", n, s, got, want)
			}
		}
	}
}

// TestHasBreak: the first-byte scan agrees with searching for every break
// and for markup (a tag, a comment, CDATA brackets), on each break in every
// position and on near misses that share a first byte (an em dash, a
// no-break space, a full-width comma, "a < b", &amp;).
func TestHasBreak(t *testing.T) {
	markup := regexp.MustCompile(`<!\[CDATA\[|\]\]>|<!--(?s:.*?)-->|<[A-Za-z/!?][^<>]*>`)
	naive := func(s string) bool {
		for _, x := range breaks {
			if strings.Contains(s, x) {
				return true
			}
		}
		return markup.MatchString(s)
	}
	cases := []string{"", "plain text", "—", "\u00a0", "，", "<b>x</b>", "a < b", "a <1> b", "x]y", "]]", "<b", "<!-- x -->",
		"<![CDATA[x", "x]]>", "&amp;", "<wb", "&sh", "&#82", "\xe2", "\xc2", "\xef"}
	for _, x := range breaks {
		cases = append(cases, x, "a"+x, x+"b", "二教"+x+"101", "<b>&amp;—"+x)
	}
	for _, c := range cases {
		assert.Equal(t, naive(c), hasBreak(c), "%q", c)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "<", "&", "\n", "—", "\u00a0", "wbr>", "#8203;", "shy;", "\u200b", "二", "\xef", "/>"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		require.Equal(t, naive(s), hasBreak(s), "%q", s)
		long := strings.Repeat("x", 300) + s // the other way, for long texts
		require.Equal(t, naive(long), hasBreak(long), "%q", long)
	}
}

// TestSpecialBytes: the short-text shortcut of find skips the decoded views
// and the break search only when neither could start: every escape byte
// and every break's first byte is special.
func TestSpecialBytes(t *testing.T) {
	for c := 0; c < 256; c++ {
		s := string([]byte{byte(c)})
		if firstEscape(s) >= 0 || isBreakLead[c] {
			assert.True(t, isSpecial[c], "byte %#x", c)
		}
	}
	for _, x := range breaks {
		assert.True(t, isSpecial[x[0]], "%q", x)
	}
	// And short texts are still redacted in every form.
	r := newRedactor()
	r.add("portalSess-1a2b3c4d5e6f7a8b")
	for _, in := range []string{"x=portalSess-1a2b3c4d5e6f7a8b", "x=portalSess%2D1a2b3c4d5e6f7a8b", "portalSess-1a2b\n3c4d5e6f7a8b",
		`"portalSess\u002d1a2b3c4d5e6f7a8b"`, "portalSess&#45;1a2b3c4d5e6f7a8b"} {
		assert.Contains(t, r.string(in), Marker, "%q", in)
	}
}
