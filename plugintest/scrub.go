package plugintest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pkuinfo/harness/proxy"
)

// scrubber makes a recording fit to share. Every credential the host
// knows, in every encoding the proxy's redactor finds, becomes
// proxy.Marker (redact); each personal value is replaced consistently,
// the same value always by the same placeholder, in every string, number
// and key, wherever the proxy's redactor would find it were it a
// credential (proxy.Finder: raw, escaped, in base64, transformed).
type scrubber struct {
	redact func(string) string // nil: no credential to remove
	values []string            // longest first
	place  map[string]string
	find   []*proxy.Finder // per value; nil for one too short for a Finder
}

// MinScrubRunes is the shortest value --scrub accepts: a shorter one would
// replace parts of unrelated text.
const MinScrubRunes = 2

func newScrubber(values []string, avoid string) (*scrubber, error) {
	s := &scrubber{place: map[string]string{}}
	seen := map[string]bool{}
	for _, v := range values {
		if utf8.RuneCountInString(v) < MinScrubRunes || strings.TrimSpace(v) != v {
			return nil, fmt.Errorf("a value to scrub must have at least %d characters and no surrounding spaces", MinScrubRunes)
		}
		if !seen[v] {
			seen[v] = true
			s.values = append(s.values, v)
		}
	}
	sort.SliceStable(s.values, func(i, j int) bool { return len(s.values[i]) > len(s.values[j]) })
	used := map[string]bool{}
	k := 1
	for _, v := range s.values {
		var p string
		for tries := 0; ; tries++ {
			if tries > 1000 {
				return nil, fmt.Errorf("no placeholder found for a value to scrub")
			}
			p = placeholder(v, k)
			k++
			if p == v {
				return nil, fmt.Errorf("a value to scrub must hold a letter or a digit")
			}
			if !used[p] && !seen[p] && !strings.Contains(avoid, p) {
				break
			}
		}
		used[p] = true
		s.place[v] = p
		var f *proxy.Finder
		if len(v) >= proxy.MinFindLen {
			f = proxy.NewFinder(v)
		}
		s.find = append(s.find, f)
	}
	return s, nil
}

// forms are the encodings a placeholder is written in when its value was
// found in one of them (URL query and path escaping, JSON \u escapes in
// lower and upper hex); a value found in any other form is replaced by
// the placeholder as it is, which an HTML or JSON text reads the same (a
// case that then replays differently is not written). They are also how
// a value too short for a proxy.Finder is found.
var forms = []func(string) string{
	func(v string) string { return v },
	url.QueryEscape,
	url.PathEscape,
	func(v string) string { return jsonEscape(v, false) },
	func(v string) string { return jsonEscape(v, true) },
}

// jsonEscape writes each non-ASCII character of s as JSON \u escapes.
func jsonEscape(s string, upper bool) string {
	format := `\u%04x`
	if upper {
		format = `\u%04X`
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, format, u)
		}
	}
	return b.String()
}

// spans are where x holds value i: [from, to) byte ranges.
func (s *scrubber) spans(i int, x string) [][2]int {
	if f := s.find[i]; f != nil {
		return f.Find(x)
	}
	var out [][2]int
	for _, enc := range forms {
		f := enc(s.values[i])
		for at := 0; ; {
			j := strings.Index(x[at:], f)
			if j < 0 {
				break
			}
			out = append(out, [2]int{at + j, at + j + len(f)})
			at += j + len(f)
		}
	}
	return out
}

// like is the placeholder of value i in the form seg has.
func (s *scrubber) like(i int, seg string) string {
	v := s.values[i]
	for _, enc := range forms {
		if enc(v) == seg {
			return enc(s.place[v])
		}
	}
	return s.place[v]
}

var stems = []rune("甲乙丙丁戊己庚辛壬癸")

// placeholder is a stand-in of v's shape, numbered k: each digit a digit
// (a number stays a number: 2100012345 becomes 9000000001), each letter
// x or X with k in base 26 in its last letters, each Han character 某 or a heavenly
// stem; other characters ('@', '.', '-') are kept.
func placeholder(v string, k int) string {
	rs := []rune(v)
	var digits, letters, hans []int
	for i, r := range rs {
		switch {
		case r >= '0' && r <= '9':
			digits = append(digits, i)
		case r < 0x80 && unicode.IsLetter(r):
			letters = append(letters, i)
		case unicode.Is(unicode.Han, r):
			hans = append(hans, i)
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			hans = append(hans, i)
		}
	}
	out := append([]rune(nil), rs...)
	if n := len(digits); n > 0 {
		d := strconv.Itoa(k)
		if len(d) < n {
			d = strings.Repeat("0", n-len(d)) + d
			if n > 1 {
				d = "9" + d[1:]
			}
		}
		d = d[len(d)-n:]
		for j, i := range digits {
			out[i] = rune(d[j])
		}
	}
	if n := len(letters); n > 0 {
		l := make([]rune, n)
		for j := range l {
			l[j] = 'x'
		}
		for j, x := n-1, k; j >= 0 && x > 0; j, x = j-1, x/26 {
			l[j] = rune('a' + x%26)
		}
		for j, i := range letters {
			if unicode.IsUpper(rs[i]) {
				out[i] = unicode.ToUpper(l[j])
			} else {
				out[i] = l[j]
			}
		}
	}
	if n := len(hans); n > 0 {
		for _, i := range hans {
			out[i] = '某'
		}
		for j, x := n-1, k; j >= 1 && x > 0; j, x = j-1, x/10 {
			out[hans[j]] = stems[x%10]
		}
		if n == 1 {
			out[hans[0]] = stems[k%10]
		}
	}
	return string(out)
}

// str scrubs a string: credentials first, then the personal values, in
// one pass (a placeholder is never scrubbed again; where two values'
// spans overlap, the one that starts first, else the longer, wins).
func (s *scrubber) str(x string) string {
	if s == nil {
		return x
	}
	if s.redact != nil {
		x = s.redact(x)
	}
	type hit struct{ from, to, v int }
	var hits []hit
	for i := range s.values {
		for _, r := range s.spans(i, x) {
			hits = append(hits, hit{r[0], r[1], i})
		}
	}
	if len(hits) == 0 {
		return x
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].from != hits[b].from {
			return hits[a].from < hits[b].from
		}
		return hits[a].to > hits[b].to
	})
	var b strings.Builder
	last := 0
	for _, h := range hits {
		if h.from < last {
			continue
		}
		b.WriteString(x[last:h.from])
		b.WriteString(s.like(h.v, x[h.from:h.to]))
		last = h.to
	}
	b.WriteString(x[last:])
	return b.String()
}

// value scrubs a JSON value: strings, numbers (a number that holds a
// value keeps its digits' shape) and keys.
func (s *scrubber) value(v any) any {
	if s == nil {
		return v
	}
	switch x := v.(type) {
	case string:
		return s.str(x)
	case json.Number:
		t := s.str(string(x))
		if t == string(x) {
			return x
		}
		if json.Valid([]byte(t)) {
			return json.Number(t)
		}
		return t
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.value(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[s.str(k)] = s.value(e)
		}
		return out
	}
	return v
}

func (s *scrubber) values2(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := url.Values{}
	for k, vs := range v {
		for _, x := range vs {
			out.Add(s.str(k), s.str(x))
		}
	}
	return out
}
