package interpreter

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every cut preview of jq's goes, whatever it holds; other text stays.
func TestHidePreviews(t *testing.T) {
	for in, want := range map[string]string{
		`expected an array but got: object ({"a":"s3cr3t-session-e2e- ...})`: `expected an array but got: object (…)`,
		`cannot subtract: array (["x","quo\"te\\sla ...]) and number (1)`:    `cannot subtract: array (…) and number (1)`,
		`expected an object but got: string ("abc(def ...")`:                 `expected an object but got: string (…)`,
		`number (12345678901234567890123 ...)`:                               `number (…)`,
		`two: string ("aaaaaaaaaaaaaaaaaaaaaaaaa ...") and string ("b ...")`: `two: string (…) and string (…)`,
		`loading ... done`:                           `loading ... done`,
		`object ({"a":1}) is not an array`:           `object ({"a":1}) is not an array`,
		`(far ` + string(make([]byte, 40)) + ` ...)`: `(far ` + string(make([]byte, 40)) + ` ...)`,
	} {
		assert.Equal(t, want, hidePreviews(in), in)
	}
}

// redactResult searches a result's text once when it can; a result it
// finds no credential in is what redacting every value and then the whole
// text returns,
// for values holding credentials in the forms the redactor finds, split
// over values, beside escapes and markup.
func TestRedactResultOneSearchIsEachValue(t *testing.T) {
	const secret = "s3cr3t-Session-9f8e7d6c"
	px := proxy.New(proxy.Config{
		Catalogue: proxy.Catalogue{"portal": &proxy.Service{Name: "portal", Origin: "https://portal.example.edu", Auth: proxy.Auth{Cookies: []string{"SID"}}}},
		Keystore:  proxy.MemKeystore(proxy.Secrets{"portal": {Cookies: map[string]string{"SID": secret}}}),
	})
	call := px.NewCall("t", manifest.Access{Campus: []manifest.CampusAccess{{Service: "portal"}}})
	rev := []rune(secret)
	slices.Reverse(rev)
	pieces := []string{
		secret, string(rev), strings.ToUpper(secret), hex.EncodeToString([]byte(secret)),
		base64.StdEncoding.EncodeToString([]byte("x" + secret)), url.QueryEscape(secret + "/"),
		secret[:9], secret[9:], "<", ">", "<b>", "\u200b", `\`, "%", "%41", "&amp;", "&#115;", "=", "=3D", `"`,
		"二教", "a", "", "12", "]]>", "<![CDATA[", "\n", "\x1b[31m", "\u00ad",
		strings.Replace(secret, "-", "\u200b-", 1), strings.Replace(secret, "S", "&#83;", 1),
		strings.Replace(secret, "S", "%53", 1), strings.Replace(secret, "e", "<i>e</i>", 1),
	}
	rng := rand.New(rand.NewPCG(13, 4))
	text := func() string {
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(6); {
		case k == 0 || depth == 0 && k > 2:
			return text()
		case k == 1:
			return rng.IntN(2) == 0
		case k == 2:
			return rng.IntN(1 << 40)
		case k == 3:
			out := []any{}
			for range rng.IntN(4) {
				out = append(out, value(depth-1))
			}
			return out
		default:
			out := map[string]any{}
			for range rng.IntN(4) {
				out[text()] = value(depth - 1)
			}
			return out
		}
	}
	fast := 0
	for range 4000 {
		v := steps.FromGo(value(3))
		want, err1 := redactResultEach(v, 10, call.Redact)
		got, err2 := redactResult(v, 10, call.Redact)
		require.Equal(t, err1, err2)
		if !strings.Contains(string(got), proxy.Marker) {
			// (With a marker, both went value by value, where two keys
			// redacted alike keep either value.)
			require.Equal(t, string(want), string(got), "%#v", v)
			fast++
		} else {
			require.Contains(t, string(want), proxy.Marker, "%#v", v)
		}
	}
	assert.Greater(t, fast, 100, "values without a credential are in the test")
	// A '<' in one value and a '>' in another make markup of the text
	// between them, hiding a credential one value holds with a break in
	// it: such a text is redacted value by value.
	split := []any{"<" + strings.Replace(secret, "-", "\u200b-", 1), ">"}
	got, err := redactResult(split, 10, call.Redact)
	require.NoError(t, err)
	assert.Equal(t, `["<`+proxy.Marker+`",">"]`, string(got))
	one, err := redactResult(map[string]any{"a": secret}, 10, call.Redact)
	require.NoError(t, err)
	assert.Equal(t, `{"a":"`+proxy.Marker+`"}`, string(one))
}
