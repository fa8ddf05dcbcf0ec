package proxy

import (
	"math/rand/v2"
	"testing"
)

// The unrolled prefix hashes are hashOf of every prefix, at every length
// (the four-byte steps and the tail).
func TestPrefixHashesAreHashOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 0; n < 70; n++ {
		for range 20 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			h := make([]uint64, n+1)
			for i := range h {
				h[i] = 12345 // not left as the scan's last buffer had it
			}
			prefixHashes(h, string(b))
			for j := 0; j <= n; j++ {
				if want := hashOf(string(b[:j])); h[j] != want {
					t.Fatalf("%x: prefix %d hashes to %#x, want %#x", b, j, h[j], want)
				}
			}
		}
	}
}
