package proxy

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// jsonHandoffFieldsPerWord is the scan of one word at a time that the
// grouped scan replaced: it stays here as the reference.
func jsonHandoffFieldsPerWord(body []byte, w word, h *handoffs) {
	for off := 0; off < len(body); {
		i := w.index(body[off:])
		if i < 0 {
			return
		}
		i += off
		off = i + len(w.s)
		lo := max(0, i-64)
		ks := bytes.LastIndexByte(body[lo:i], '"')
		if ks < 0 {
			continue
		}
		ks += lo + 1
		ke := bytes.IndexByte(body[i:], '"')
		if ke < 0 {
			return
		}
		ke += i
		if !isStrictHandoffName(unsafe.String(unsafe.SliceData(body[ks:ke]), ke-ks)) {
			continue
		}
		j := ke + 1
		for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\r' || body[j] == '\n') {
			j++
		}
		if j >= len(body) || body[j] != ':' {
			continue
		}
		j++
		for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\r' || body[j] == '\n') {
			j++
		}
		if j >= len(body) || body[j] != '"' {
			continue
		}
		vs := j + 1
		esc := false
		ve := -1
		for k := vs; k < len(body) && k < vs+16<<10; k++ {
			if body[k] == '\\' {
				esc = true
				k++
				continue
			}
			if body[k] == '"' {
				ve = k
				break
			}
		}
		if ve < 0 {
			continue
		}
		v := unsafe.String(unsafe.SliceData(body[vs:ve]), ve-vs)
		if esc {
			var d string
			if json.Unmarshal(body[vs-1:ve+1], &d) == nil {
				v = d
			}
		}
		h.add(v, true)
		off = ve + 1
	}
}

// The grouped scan of the JSON hand-off fields (one scan per rarest byte,
// shared by the words that have it) takes the same values as a scan per
// word, on texts made of keys, values, quotes, escapes and pieces of the
// words.
func TestJSONHandoffFieldsGroupedAsPerWord(t *testing.T) {
	p := New(Config{Keystore: MemKeystore(Secrets{})})
	c := p.NewCall("t", access("card"))
	tg := &target{}
	require.Len(t, fieldGroups, 4)
	for _, g := range fieldGroups {
		for _, w := range g.ws {
			require.Equal(t, g.c, w.s[w.a])
		}
	}
	pieces := []string{`"`, `:`, ` `, `\n`, `\"`, `\\`, `\u0041`, `{`, `}`, `,`, "\t",
		`token`, `TOKEN`, `ticket`, `ICKET`, `jwt`, `JWT`, `Jwt`, `oken`, `icket`, `k`, `K`, `j`, `J`,
		`access_`, `ticket_token`, `x-auth-`, `id_`, `ST-12345678-abcdefghij`, `value1234567890abcd`,
		`eyJhbGciOiJIUzI1NiJ9.abcdefgh`, `二`, "\xff"}
	rng := rand.New(rand.NewPCG(5, 6))
	taken := 0
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(40) {
			if rng.IntN(4) == 0 {
				// A field: "key" : "value", pieces in its key and value.
				b.WriteString(`"` + pieces[rng.IntN(len(pieces))] + pieces[rng.IntN(len(pieces))] + `"`)
				b.WriteString([]string{":", " : ", ":\n"}[rng.IntN(3)])
				b.WriteString(`"` + pieces[rng.IntN(len(pieces))] + pieces[rng.IntN(len(pieces))] + `"`)
				continue
			}
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		body := []byte(b.String())
		grouped := &handoffs{c: c, t: tg}
		for i := range fieldGroups {
			jsonHandoffFields(body, &fieldGroups[i], grouped)
		}
		perWord := &handoffs{c: c, t: tg}
		for _, w := range fieldWords {
			jsonHandoffFieldsPerWord(body, w, perWord)
		}
		got, want := slices.Clone(grouped.fresh), slices.Clone(perWord.fresh)
		slices.Sort(got)
		slices.Sort(want)
		require.Equal(t, want, got, "%q", body)
		taken += len(got)
	}
	require.Greater(t, taken, 1000, "too few texts held a hand-off field")
}
