// Package noninterference holds what the non-interference property test
// needs on both of its drivers (in-process in this package's tests, and
// end to end in e2e): the hostile documents of testdata/hostile, random
// credentials in pairs of the same shape, the attacker's loopback servers
// (a campus service declared through a services file and a web origin
// reached through --resolve), what one run lets a plugin observe, and the
// comparison of two runs.
//
// The property: nothing a plugin can observe depends on a credential,
// except that a value equal to a whole credential (or a whole encoding of
// one) is replaced. Each document runs twice, against two sets of random
// credentials of the same shape; everything observable, with each whole
// credential replaced by a fixed marker, must be byte-identical.
package noninterference

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
)

// Pairing is how the two credential sets of a pair relate: every value of
// the second has the shape (length, alphabet, fixed characters) of its
// counterpart in the first, and shares its first half, its last half or
// nothing (every variable character differs).
type Pairing int

const (
	SharePrefix Pairing = iota
	ShareSuffix
	ShareNothing
)

// Pairings lists every pairing, in the order subtests name them.
var Pairings = []Pairing{SharePrefix, ShareSuffix, ShareNothing}

func (p Pairing) String() string {
	switch p {
	case SharePrefix:
		return "prefix"
	case ShareSuffix:
		return "suffix"
	case ShareNothing:
		return "nothing"
	}
	return fmt.Sprintf("pairing(%d)", int(p))
}

// classes are the variable characters of a shape: each of these symbols
// stands for one character drawn from its alphabet; any other byte is
// fixed.
var classes = map[byte]string{
	'#': "0123456789ABCDEF",
	'$': "0123456789abcdef",
	'@': "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	'?': "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
	'*': "0123456789",
	'!': "123456789",
	// A header value's markup and separators (a Digest answer, a
	// signed value with quotes and "&"): the bytes Go sends in a header
	// value that a page's JSON, HTML, URL or header syntax gives a
	// meaning to. "~" mixes them with the space and letters; "^", a
	// first or last byte, is markup alone (no white space, which a
	// secret may not start or end with, and where the step's text
	// before or after the session gives it most meaning).
	'^': "\"'<>&=;,?#/`",
	'~': "\"'<>&=;,?#/` ABCDEFabcdef0123",
}

// Shapes are the credentials of one run, by name, as templates (see
// classes). They are shaped like the real campus values: a 32-digit hex
// JSESSIONID, a bearer token, a PHP session with escapes and a "+", a JWT,
// a session that is a number, a header session whose every byte may be
// markup (the portal's X-Auth-Token, its first byte too: what stands
// right after a step's text may open a JSON string, end an attribute or a
// query parameter), and a hand-off ticket the portal issues in its SSO
// answers (a credential the secrets file does not hold).
var Shapes = map[string]string{
	"session": "################################",
	"token":   "@@@@@@@@@@@@@@@@@@@@@@@@",
	"php":     "@@@@@@+@@@@%2F@@%3D%3D-$$$$$$$$$$$$$$$$",
	"jwt":     "eyJhbGciOiJIUzI1NiJ9.??????????????????????.??????????????????????",
	"number":  "!***********",
	"ticket":  "$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$$",
	"markup":  "^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~^",
}

// Planted is the session the attacker's own account has: a portal SSO
// entry point sets it for any ticket. It is the same in every run.
const Planted = "A77ACCE5500000000000000000000000"

// Creds is one run's credentials, by the names of Shapes.
type Creds map[string]string

// NewPair draws two credential sets related by p from rng.
func NewPair(rng *rand.Rand, p Pairing) (Creds, Creds) {
	a, b := Creds{}, Creds{}
	for name, shape := range Shapes {
		a[name], b[name] = pairOf(rng, shape, p)
	}
	return a, b
}

func pairOf(rng *rand.Rand, shape string, p Pairing) (string, string) {
	var vars []int
	for i := 0; i < len(shape); i++ {
		if classes[shape[i]] != "" {
			vars = append(vars, i)
		}
	}
	a, b := []byte(shape), []byte(shape)
	half := len(vars) / 2
	for k, i := range vars {
		alpha := classes[shape[i]]
		a[i] = alpha[rng.IntN(len(alpha))]
		shared := (p == SharePrefix && k < half) || (p == ShareSuffix && k >= len(vars)-half)
		if shared {
			b[i] = a[i]
			continue
		}
		// Another character of the same alphabet.
		j := strings.IndexByte(alpha, a[i])
		b[i] = alpha[(j+1+rng.IntN(len(alpha)-1))%len(alpha)]
	}
	return string(a), string(b)
}

// Replacer replaces each whole credential of c (and the token of the
// bearer value) by a fixed marker naming it: «session», «token», …
func (c Creds) Replacer() *strings.Replacer {
	var pairs []string
	// Longest first, so no value's marker cuts another value.
	names := sortedNames(c)
	for _, n := range names {
		pairs = append(pairs, c[n], "«"+n+"»")
	}
	return strings.NewReplacer(pairs...)
}

func sortedNames(c Creds) []string {
	names := slices.Collect(maps.Keys(c))
	slices.SortFunc(names, func(x, y string) int {
		if d := len(c[y]) - len(c[x]); d != 0 {
			return d
		}
		return strings.Compare(x, y)
	})
	return names
}

// SecretsYAML is the secrets file of c for the services Services writes.
func (c Creds) SecretsYAML() string {
	return "portal:\n  cookies: { JSESSIONID: \"" + c["session"] + "\" }\n  headers: { Authorization: \"Bearer " + c["token"] + "\", " + AuthHeader + ": " + yamlQuote(c["markup"]) + " }\n" +
		"php:\n  cookies: { PHPSESSID: \"" + c["php"] + "\" }\n" +
		"jwt:\n  cookies: { PHPSESSID: \"" + c["jwt"] + "\" }\n" +
		"xiaobei:\n  cookies: { session: \"" + c["number"] + "\" }\n"
}

// KeystoreJSON is the home keystore holding the same sessions.
func (c Creds) KeystoreJSON() string {
	return `{"version":1,"services":{` +
		`"portal":{"cookies":{"JSESSIONID":"` + c["session"] + `"},"headers":{"Authorization":"Bearer ` + c["token"] + `","` + AuthHeader + `":` + jsonQuote(c["markup"]) + `}},` +
		`"php":{"cookies":{"PHPSESSID":"` + c["php"] + `"}},` +
		`"jwt":{"cookies":{"PHPSESSID":"` + c["jwt"] + `"}},` +
		`"xiaobei":{"cookies":{"session":"` + c["number"] + `"}}}}` + "\n"
}

// AuthHeader is the portal's second session header, which holds the
// markup credential.
const AuthHeader = "X-Auth-Token"

// yamlQuote is s as a YAML double-quoted scalar: a "#", ", " or "&" in
// it is then no comment, no separator and no anchor.
func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// jsonQuote is s as a JSON string (its "<", ">" and "&" as \u escapes,
// as encoding/json writes them).
func jsonQuote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
