package steps

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/itchyny/gojq"
	"github.com/stretchr/testify/require"
)

// TestAppendJSONIsMarshal: appendJSON writes what gojq.Marshal writes, for
// the values whose text has rules (numbers at the format's edges, escapes,
// invalid UTF-8, key order, large objects) and for random nested values.
func TestAppendJSONIsMarshal(t *testing.T) {
	big1, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	values := []any{
		nil, true, false, 0, -1, math.MaxInt64, math.MinInt64, big1, json.Number("1.50"),
		0.0, math.Copysign(0, -1), 1.5, -2.25e-7, 1e-6, 9.99e-7, 1e21, 1e20, 123456789.125, 1e-9, 1e100, -1e-100,
		math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64,
		"", "plain", "quote\" back\\slash", "\b\f\n\r\t\x00\x1f\x7f", "<>&\u2028\u2029", "二教101", "bad \xff\xfe utf-8", "\xe4\xba", "emoji 🙂",
		[]any{}, map[string]any{}, []any{nil, []any{map[string]any{}}},
		map[string]any{"b": 1, "a": 2, "": 3, "B": 4, "é": 5, "a\x00": 6, "aa": 7},
	}
	large := map[string]any{}
	for i := range 40 {
		large[strings.Repeat("k", i%7)+string(rune('a'+i%26))+string(rune('0'+i/26))] = i
	}
	values = append(values, large)
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		values = append(values, randomValue(r, 4))
	}
	for _, v := range values {
		want, err := gojq.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSON(nil, v)), "%#v", v)
	}
}

func randomValue(r *rand.Rand, depth int) any {
	k := r.IntN(9)
	if depth == 0 {
		k %= 6
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return r.IntN(2000) - 1000
	case 3:
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(60)-30))
	case 4, 5:
		return randomString(r)
	case 6:
		out := make([]any, r.IntN(5))
		for i := range out {
			out[i] = randomValue(r, depth-1)
		}
		return out
	default:
		out := map[string]any{}
		for range r.IntN(12) {
			out[randomString(r)] = randomValue(r, depth-1)
		}
		return out
	}
}

func randomString(r *rand.Rand) string {
	const alphabet = "a\"\\\n\x01\xe4\xba\x8c\xff<Z"
	var sb strings.Builder
	for range r.IntN(8) {
		sb.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return sb.String()
}
