package noninterference

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The pairs have the shape of Shapes and share what the pairing says:
// the first half of the variable characters, the last half, or none.
func TestNewPairShapes(t *testing.T) {
	for _, p := range Pairings {
		a, b := NewPair(NewRand(), p)
		for name, shape := range Shapes {
			x, y := a[name], b[name]
			require.Len(t, x, len(shape), name)
			require.Len(t, y, len(shape), name)
			var vars []int
			for i := 0; i < len(shape); i++ {
				if alpha := classes[shape[i]]; alpha != "" {
					require.Contains(t, alpha, string(x[i]), name)
					require.Contains(t, alpha, string(y[i]), name)
					vars = append(vars, i)
				} else {
					require.Equal(t, shape[i], x[i], name)
					require.Equal(t, shape[i], y[i], name)
				}
			}
			half := len(vars) / 2
			for k, i := range vars {
				shared := (p == SharePrefix && k < half) || (p == ShareSuffix && k >= len(vars)-half)
				require.Equal(t, shared, x[i] == y[i], "%s %s position %d", p, name, i)
			}
		}
	}
}

func obs(ch map[string]string, store string) Observation {
	return Observation{Channels: ch, StoreBefore: store, StoreAfter: store}
}

// Compare finds the same text equal once each run's credentials are
// masked, and reports a differing channel with its first differing bytes,
// a whole credential in what the plugin sees, a changed sessions' file and
// a result that is not JSON.
func TestCompare(t *testing.T) {
	a, b := Creds{"session": "AAAA1111"}, Creds{"session": "BBBB2222"}
	same := Compare(
		obs(map[string]string{"exit": "0", "stdout": `{"s":"[redacted]"}`, "campus:portal": "Cookie: JSESSIONID=AAAA1111"}, "x"),
		obs(map[string]string{"exit": "0", "stdout": `{"s":"[redacted]"}`, "campus:portal": "Cookie: JSESSIONID=BBBB2222"}, "x"),
		a, b, nil, nil)
	require.Empty(t, same)

	fails := Compare(
		obs(map[string]string{"exit": "0", "stdout": `{"s":"[redacted] ..."}`, "web": "GET /x?c=AAAA1111"}, "x"),
		obs(map[string]string{"exit": "0", "stdout": `{"s":"BBBB ..."}`, "web": "GET /x?c=BBBB2222"}, "x"),
		a, b, nil, nil)
	text := strings.Join(fails, "\n")
	require.Contains(t, text, "stdout: first difference at byte 6")
	require.Contains(t, text, "web of run 1 holds a whole credential")
	require.NotContains(t, text, "web: first difference", "the whole credentials are masked alike")

	o := obs(map[string]string{"exit": "0", "stdout": `{"n":[redacted]}`}, `{"a":1}`)
	o.StoreAfter = `{"a":2}`
	text = strings.Join(Compare(o, obs(map[string]string{"exit": "0", "stdout": `{"n":[redacted]}`}, `{"a":1}`), a, b, nil, nil), "\n")
	require.Contains(t, text, "run 1 changed the sessions' file")
	require.Contains(t, text, "run 1 printed a result that is not JSON")
	require.NotContains(t, text, "run 2 changed")

	// The same sessions in another layout are the same file.
	require.True(t, sameStore(`{"a": {"b": 1}}`, "{\n  \"a\": {\"b\": 1}\n}\n"))
	// Pieces a service echoed on its own are masked; durations too.
	require.Equal(t, "«piece»«piece»\ntrace: x: step 1 (jq) D out\ntrace: x: step 2 (kv_set) D «session»",
		Normalize("AAAABBBB\ntrace: x: step 1 (jq) 1.5ms out\ntrace: x: step 2 (kv_set) 1m2.03s AAAA1111", a, []string{"AAAA", "BBBB"}))
}

// The PHP page writes "A" without a semicolon only where that still reads
// as "A".
func TestRefsWithoutSemicolon(t *testing.T) {
	require.Equal(t, "&#65b A6 &#65;x &#65", refsWithoutSemicolon("Ab A6 A;x A"))
}
