package interpreter

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
