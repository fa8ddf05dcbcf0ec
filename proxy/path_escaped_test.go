package proxy

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fast form of an escaped path is what the general normalisation makes
// of it, and every path it does not take is left to the general one.
func TestEscapedPathMatchesNormalisation(t *testing.T) {
	for _, p := range []string{
		"/api/classrooms/%E4%BA%8C%E6%95%99/free", "/a%20b/c;x=1/", "/%41", "/x/%E4%BA%8C",
		"/%2e%2E/x", "/%2E/x", "/a/%2F/b", "/a/%5C", "/a/%25", "/a/%3B", "/a/%0A", "/a/%e4", "/a//%41",
		"/a/%4", "/a/%G1", "/a/%41?x=1", "/a/%41#f", "/%41/..", "/%41/.;x", "/a b/%41",
	} {
		checkEscapedPath(t, p)
	}
	assert.True(t, checkEscapedPath(t, "/api/classrooms/%E4%BA%8C%E6%95%99/free"), "a template's escaped path takes the fast form")
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "0", "/", ".", ";", "%", "%41", "%E4", "%e4", "%2E", "%2F", "%25", "%3B", "%5C", "%00", "%7F", " ", "~", "?", "=", "\u00e9"}
	fast := 0
	for range 20000 {
		p := "/"
		for range r.IntN(12) {
			p += alphabet[r.IntN(len(alphabet))]
		}
		if checkEscapedPath(t, p) {
			fast++
		}
	}
	assert.Greater(t, fast, 200, "the random paths exercise the fast form")
}

func checkEscapedPath(t *testing.T, p string) bool {
	t.Helper()
	d, ok := escapedPath(p)
	if !ok {
		return false
	}
	cp, err := normaliseSlow(p)
	require.NoError(t, err, "%q is taken by the fast form but refused by the general one", p)
	assert.Equal(t, cp.decoded, d, p)
	assert.Equal(t, cp.escaped, p, p)
	assert.Empty(t, cp.query, p)
	got, err := normalisePath(p)
	require.NoError(t, err, p)
	assert.Equal(t, cp, got, p)
	return true
}
