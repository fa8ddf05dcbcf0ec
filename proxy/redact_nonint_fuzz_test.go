package proxy

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// The alphabets credentials of one shape are drawn from.
var shapeAlphabets = []string{
	"0123456789abcdef",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-",
}

// twoCredentials draws two different credentials of one shape (length,
// alphabet) that share a prefix, a suffix, both or neither.
func twoCredentials(rng *rand.Rand, shape, shared byte) (a, b string) {
	alpha := shapeAlphabets[int(shape)%len(shapeAlphabets)]
	n := 16 + int(shape>>2)%33
	draw := func(k int) string {
		out := make([]byte, k)
		for i := range out {
			out[i] = alpha[rng.IntN(len(alpha))]
		}
		return string(out)
	}
	p, q := 0, 0
	switch shared >> 6 {
	case 1:
		p = int(shared&63) % (n - 8)
	case 2:
		q = int(shared&63) % (n - 8)
	case 3:
		p = int(shared&63) % ((n - 8) / 2)
		q = (n - 8) / 2
	}
	a = draw(n)
	for {
		b = a[:p] + draw(n-p-q) + a[n-q:]
		if !strings.EqualFold(a, b) {
			return a, b
		}
	}
}

// guesses are what a plugin might write to learn about a credential x: its
// parts and its near neighbours, in the forms the redactor knows.
func guesses(rng *rand.Rand, x, a, b string) []string {
	n := len(x)
	var out []string
	for range 6 {
		i := 1 + rng.IntN(n-1)
		var g string
		switch rng.IntN(4) {
		case 0:
			g = x[:i]
		case 1:
			g = x[n-i:]
		case 2:
			j := rng.IntN(n - i + 1)
			g = x[j : j+i]
		case 3:
			// A neighbour: one character changed.
			k := rng.IntN(n)
			g = x[:k] + string(rune('!'+rng.IntN(90))) + x[k+1:]
			if strings.EqualFold(g, a) || strings.EqualFold(g, b) {
				continue
			}
		}
		var form string
		switch rng.IntN(8) {
		case 0:
			form = g
		case 1:
			form = g + " ..."
		case 2:
			form = hex.EncodeToString([]byte(g))
		case 3:
			form = strings.ToUpper(g)
		case 4:
			form = reversed(g)
		case 5:
			form = url.QueryEscape(g)
		default:
			pre := strings.Repeat("q", rng.IntN(3))
			if whole := strings.ToLower(pre + g); strings.Contains(whole, strings.ToLower(a)) || strings.Contains(whole, strings.ToLower(b)) {
				// The prefix completed a credential (a part x[1:] of an x
				// that starts with q): that is an echo, not a guess, and
				// the redactor is right to hide it in one run only.
				continue
			}
			out = append(out, base64.StdEncoding.EncodeToString([]byte(pre+g+"!")))
			continue
		}
		if l := strings.ToLower(form); strings.Contains(l, strings.ToLower(a)) || strings.Contains(l, strings.ToLower(b)) {
			// The form spells a whole credential as it is (a neighbour
			// "&573…" escaped is "%26573…", which holds "6573…"): an
			// echo, not a guess.
			continue
		}
		out = append(out, form)
	}
	return out
}

// echoes are whole encodings of x, as a server's answer may hold them.
func echoes(x string) []string {
	var u strings.Builder
	for _, c := range x {
		fmt.Fprintf(&u, "\\u%04x", c)
	}
	return []string{x, url.QueryEscape(x), hex.EncodeToString([]byte(x)), strings.ToUpper(x),
		base64.StdEncoding.EncodeToString([]byte("user:" + x)), base64.URLEncoding.EncodeToString([]byte("k" + x + ";")),
		u.String(), "&#" + fmt.Sprint(int(x[0])) + ";" + x[1:], reversed(x),
		// Quoted-printable, its soft line break escaped in a JSON string
		// or turned into spaces in a header value.
		x[:len(x)/2] + `=\r\n` + x[len(x)/2:], x[:len(x)/3] + "= \t" + x[len(x)/3:]}
}

// FuzzRedactNonInterference is the property on the redactor itself: a
// text the same in two runs but for whole encodings of the credential
// (echoes of it), redacted with two different credentials of one shape,
// comes out byte for byte the same. The text holds random parts and near
// neighbours of both credentials in every form the redactor knows: a rule
// that redacted a part of a credential would redact it in one run only.
func FuzzRedactNonInterference(f *testing.F) {
	f.Add(uint64(1), byte(0), byte(0), "plain text", []byte{0, 1, 2})
	f.Add(uint64(2), byte(5), byte(0x45), `{"a":"b"} %41 &amp; \u0041`, []byte{3, 1, 4, 1, 5})
	f.Add(uint64(3), byte(130), byte(0x85), "<b>x</b>\n  y=3D", []byte{9, 2, 6})
	f.Add(uint64(4), byte(255), byte(0xc7), "", []byte{})
	f.Fuzz(func(t *testing.T, seed uint64, shape, shared byte, text string, slots []byte) {
		if len(text) > 2048 || len(slots) > 64 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, uint64(shape)<<8|uint64(shared)))
		a, b := twoCredentials(rng, shape, shared)
		ra, rb := newRedactor(), newRedactor()
		ra.add(a)
		rb.add(b)
		g := append(guesses(rng, a, a, b), guesses(rng, b, a, b)...)
		ea, eb := echoes(a), echoes(b)
		// The pieces, each between " | ": the fuzzer's text in chunks,
		// the guesses (the same in both runs), the echoes. Not spaces
		// alone: "=" and a space are a quoted-printable soft line break,
		// which would join a guess ending in "=" (a neighbour, base64
		// padding) to the echo after it, as a plugin's text written right
		// before a server's echo is joined to it.
		var ta, tb strings.Builder
		put := func(s, t string) {
			ta.WriteString(" " + s + " |")
			tb.WriteString(" " + t + " |")
		}
		chunk := 0
		for i := 0; i < len(g)+len(ea)+len(slots); i++ {
			s := byte(i)
			if i < len(slots) {
				s = slots[i]
			}
			switch s % 3 {
			case 0:
				if chunk < len(text) {
					end := min(len(text), chunk+1+int(s)%64)
					put(text[chunk:end], text[chunk:end])
					chunk = end
				}
			case 1:
				k := int(s) % len(g)
				put(g[k], g[k])
			case 2:
				k := int(s) % len(ea)
				put(ea[k], eb[k])
			}
		}
		put(text[chunk:], text[chunk:])
		oa, ob := ra.string(ta.String()), rb.string(tb.String())
		if oa != ob {
			t.Fatalf("credentials %q and %q: the outputs differ\n%q\n%q", a, b, oa, ob)
		}
		if strings.Contains(oa, a) || strings.Contains(ob, b) {
			t.Fatalf("a credential survived: %q", oa)
		}
	})
}
