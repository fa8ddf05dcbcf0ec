package proxy

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A session that is a number, echoed by a server that reads it as a
// double, is written in scientific notation (Java's Double.toString and
// Jackson: 7.34519826403E11; JavaScript and Python: 7.34519826403e+11),
// where its digits never stand together; a step parses it back (JSON,
// tonumber) and holds the credential as a number. The mantissa is a form
// of the credential, matched whole; a rounded one, and the number of
// another credential, are not.
func TestNumberCredentialInScientificNotation(t *testing.T) {
	r := newRedactor()
	r.add("734519826403")
	r.add("123450000000") // trailing zeros: 1.2345E11
	r.add("SESSION-734519826403")
	f, _ := strconv.ParseFloat("734519826403", 64)
	for _, in := range []string{
		`{"balance":` + strconv.FormatFloat(f, 'E', -1, 64) + `}`,
		`{"balance":7.34519826403E11}`,
		`{"balance":7.34519826403e+11}`,
		`{"balance":-7.34519826403e+11}`,
		`balance 7.345198264030e+11 yuan`,
		`{"n":1.2345E11}`,
	} {
		got := r.string(in)
		assert.NotEqual(t, in, got, in)
		assert.Contains(t, got, Marker, in)
	}
	for _, in := range []string{
		`{"balance":7.345198264E11}`, // rounded: another number
		`{"balance":7.34519826404E11}`,
		`{"n":1.2346E11}`,
	} {
		assert.Equal(t, in, r.string(in), in)
	}
	assert.Equal(t, "", scientificMantissa("S-734519826403"))
	assert.Equal(t, "", scientificMantissa("1000"))
	assert.Equal(t, "7.34519826403", scientificMantissa("00734519826403000"))
}
