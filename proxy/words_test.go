package proxy

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// A word's index, which scans for its rarest byte, is bytes.Index.
func TestWordIndexIsBytesIndex(t *testing.T) {
	all := [][]word{words("efresh", "EFRESH"), navWords, words("<form", "<FORM", "<Form"), fieldWords, words("a", "ab", " x", "x ", "( ", "Zz")}
	var pieces []string
	for _, ws := range all {
		for _, w := range ws {
			pieces = append(pieces, w.s, w.s[:len(w.s)/2], w.s[len(w.s)/2:], w.s[1:])
		}
	}
	pieces = append(pieces, " ", "f", "k", "(", "<", `"`, ":", "e", "o")
	rng := rand.New(rand.NewPCG(1, 2))
	found := 0
	for range 3000 {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		for _, ws := range all {
			for _, w := range ws {
				if got, want := w.index(b), bytes.Index(b, []byte(w.s)); got != want {
					t.Fatalf("%q in %q: %d, want %d", w.s, b, got, want)
				} else if got >= 0 {
					found++
				}
			}
		}
	}
	if found < 1000 {
		t.Fatalf("only %d texts held a word", found)
	}
	if anchorOf("open (") != 5 || anchorOf("efresh") != 1 || anchorOf("Jwt") != 0 || anchorOf("<form") != 0 {
		t.Fatal("anchors are not the rarest bytes")
	}
}

// A word looked for in any letter case is found where bytes.Index finds
// it in the lower-cased text.
func TestFoldWordIsIndexOfLowerCase(t *testing.T) {
	ws := []foldWord{refreshWord, formWord, foldWordOf("ab"), foldWordOf("x<"), foldWordOf("<")}
	pieces := []string{"efresh", "EFRESH", "rEfReSh", "<form", "<FoRm", "<FORM", "f", "F", "<", "e", "E", "ab", "AB", "x", "X", "\xc5", " ", "K"}
	rng := rand.New(rand.NewPCG(3, 4))
	found := 0
	for range 5000 {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		for _, w := range ws {
			want := bytes.Contains(bytes.ToLower(b), []byte(w.s))
			if got := w.in(b); got != want {
				t.Fatalf("%q in %q: %v, want %v", w.s, b, got, want)
			} else if got {
				found++
			}
		}
	}
	if found < 1000 {
		t.Fatalf("only %d texts held a word", found)
	}
}
