package proxy

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naiveSearch is what multi.search must find: every occurrence of every
// pattern whose base64 edges hold, compared at every offset.
func naiveSearch(pats []pattern, b string) []span {
	var out []span
	for _, p := range pats {
		for at := 0; at+len(p.s) <= len(b); at++ {
			if b[at:at+len(p.s)] != p.s || !p.edge.ok(b, at, at+len(p.s)) {
				continue
			}
			s := span{at, at + len(p.s)}
			if p.edge != nil {
				s.from -= int(min(p.edge.leadBits, 1))
				s.to += int(min(p.edge.tailBits, 1))
			}
			out = append(out, s)
		}
	}
	return out
}

func sortSpans(s []span) []span {
	slices.SortFunc(s, func(a, b span) int {
		if a.from != b.from {
			return a.from - b.from
		}
		return a.to - b.to
	})
	return s
}

// nestedAlphabet has bytes of every class: hexadecimal digits, the other
// base64 characters, cookie octets outside base64, the space, and bytes of
// no class (a quote, a comma, UTF-8 of a Chinese character).
var nestedAlphabet = []string{"0", "7", "a", "F", "x", "Q", "+", "/", "-", "_", ".", "~", ":", " ", `"`, ",", "农"}

func randomText(rng *rand.Rand, n int, pats []pattern) string {
	var b strings.Builder
	for b.Len() < n {
		if len(pats) > 0 && rng.IntN(40) == 0 {
			p := pats[rng.IntN(len(pats))].s
			if rng.IntN(2) == 0 {
				p = p[:rng.IntN(len(p)+1)] // a part of one, which no window matches
			}
			b.WriteString(p)
			continue
		}
		b.WriteString(nestedAlphabet[rng.IntN(len(nestedAlphabet))])
	}
	return b.String()
}

// The scan walks the runs of a wider class once and looks for the
// narrower classes inside them, reusing the prefix hashes of the run
// around: it finds exactly what a comparison at every offset finds, for
// patterns of every class and many lengths, in texts of every class mix,
// short, one chunk long and several (where a narrower run starts in one
// chunk of a wider one and ends in the next).
func TestSearchNestedIsNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	classes := [][]string{
		{"0", "9", "a", "f", "C"},                    // hexadecimal
		{"0", "g", "Z", "+", "/", "-", "_"},          // base64
		{"0", "g", ".", "~", ":", "!"},               // cookie octets
		{"0", "g", " ", "."},                         // spaced
		{"0", "g", `"`, ",", "农", ";", "\\", "\x01"}, // any
	}
	for round := range 60 {
		var pats []pattern
		for range 1 + rng.IntN(12) {
			cl := classes[rng.IntN(len(classes))]
			n := minSecretLen + rng.IntN(30)
			if rng.IntN(8) == 0 {
				n = minFragment + rng.IntN(8) // a short base64 fragment
			}
			var b strings.Builder
			for b.Len() < n {
				b.WriteString(cl[rng.IntN(len(cl))])
			}
			pats = append(pats, pattern{s: b.String()})
		}
		if round%3 == 0 {
			// Base64 fragments with their edges, as addBase64 makes them.
			st := &redState{known: map[string]bool{}, keys: map[string]bool{}}
			st.addBase64([]byte("s3cr3t-session-" + string(rune('a'+round%26))))
			pats = append(pats, st.pats...)
		}
		mm := newMulti(pats)
		for _, n := range []int{0, 5, 40, 300, scanChunk + 200, 2*scanChunk + 777} {
			b := randomText(rng, n, pats)
			got := sortSpans(mm.search(b, nil))
			want := sortSpans(naiveSearch(pats, b))
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, text of %d bytes: search found %v, every offset %v", round, len(b), got, want)
			}
		}
	}
}

// A pattern inside a narrower run that lies inside a wider run, where the
// wider class has patterns too (so its run is hashed first and the
// narrower one reuses the hashes), at every offset of the narrower run.
func TestSearchNestedReusesHashes(t *testing.T) {
	spaced := "bearer tok-" + strings.Repeat("x", 20) // class spaced: its run is hashed
	hexv := "0123456789abcdef0123"                    // class hex, inside the spaced run
	pats := []pattern{{s: spaced}, {s: hexv}}
	mm := newMulti(pats)
	for pre := 0; pre < 40; pre++ {
		b := `"` + strings.Repeat("q ", pre) + hexv + " " + spaced + `"`
		got := sortSpans(mm.search(b, nil))
		want := sortSpans(naiveSearch(pats, b))
		if !slices.Equal(got, want) || len(want) != 2 {
			t.Fatalf("%q: search found %v, every offset %v", b, got, want)
		}
	}
}

// runStart and runEnd find a run's ends four bytes a step and then one at
// a time: they find what a byte-at-a-time walk finds, for every start,
// bound and class.
func TestRunEnds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		b := randomText(rng, rng.IntN(40), nil)
		for c := uint8(clsSpaced); c < nClasses; c++ {
			for p := 0; p < len(b); p++ {
				if byteClass[b[p]] < c {
					continue
				}
				for lim := 0; lim <= p; lim++ {
					s := p
					for s > lim && byteClass[b[s-1]] >= c {
						s--
					}
					if got := runStart(b, lim, p, c); got != s {
						t.Fatalf("runStart(%q, %d, %d, %d) = %d, want %d", b, lim, p, c, got, s)
					}
				}
				e := p + 1
				for e < len(b) && byteClass[b[e]] >= c {
					e++
				}
				if got := runEnd(b, p+1, c); got != e {
					t.Fatalf("runEnd(%q, %d, %d) = %d, want %d", b, p+1, c, got, e)
				}
			}
		}
	}
}

// sameBytes compares eight bytes a step and the tail one at a time: a
// difference in any byte, at any length, is seen.
func TestSameBytesEveryByte(t *testing.T) {
	for n := 0; n < 40; n++ {
		a := strings.Repeat("k", n)
		if !sameBytes(a, strings.Clone(a)) {
			t.Fatalf("length %d: equal texts differ", n)
		}
		for i := 0; i < n; i++ {
			for _, d := range []byte{1, 0x80, 0xff} {
				b := []byte(a)
				b[i] ^= d
				if sameBytes(a, string(b)) {
					t.Fatalf("length %d: a difference at %d (^%#x) is not seen", n, i, d)
				}
			}
		}
	}
}
