package plugintest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// scrubber replaces personal values consistently: the same value always by
// the same placeholder, in every string, number and key of a recording,
// raw and in the encodings text carries it in (URL query and path
// escaping, JSON \u escapes).
type scrubber struct {
	values []string // longest first
	place  map[string]string
	rep    *strings.Replacer
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
	var pairs []string
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
		for _, f := range encodings(v) {
			pairs = append(pairs, f, encodeLike(f, v, p))
		}
	}
	// Longer forms first, so that a value inside a longer one never
	// splits it; one pass, so that a placeholder is never scrubbed again.
	type pr struct{ old, new string }
	var ps []pr
	for i := 0; i < len(pairs); i += 2 {
		ps = append(ps, pr{pairs[i], pairs[i+1]})
	}
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].old) > len(ps[j].old) })
	var flat []string
	dup := map[string]bool{}
	for _, x := range ps {
		if !dup[x.old] {
			dup[x.old] = true
			flat = append(flat, x.old, x.new)
		}
	}
	s.rep = strings.NewReplacer(flat...)
	return s, nil
}

// encodings are the forms of v that text may carry: v itself, URL query
// and path escaping, and JSON \u escapes (lower and upper hex).
func encodings(v string) []string {
	out := []string{v}
	for _, f := range []string{url.QueryEscape(v), url.PathEscape(v), jsonEscape(v, false), jsonEscape(v, true)} {
		if f != v {
			out = append(out, f)
		}
	}
	return out
}

// encodeLike encodes p as form f encodes v.
func encodeLike(f, v, p string) string {
	switch f {
	case v:
		return p
	case url.QueryEscape(v):
		return url.QueryEscape(p)
	case url.PathEscape(v):
		return url.PathEscape(p)
	case jsonEscape(v, false):
		return jsonEscape(p, false)
	}
	return jsonEscape(p, true)
}

func jsonEscape(s string, upper bool) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		var units []rune
		if r > 0xffff {
			r1, r2 := utf16Pair(r)
			units = []rune{r1, r2}
		} else {
			units = []rune{r}
		}
		for _, u := range units {
			h := strconv.FormatInt(int64(u), 16)
			h = strings.Repeat("0", 4-len(h)) + h
			if upper {
				h = strings.ToUpper(h)
			}
			b.WriteString(`\u` + h)
		}
	}
	return b.String()
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
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

// str scrubs a string.
func (s *scrubber) str(x string) string {
	if s == nil || len(s.values) == 0 {
		return x
	}
	return s.rep.Replace(x)
}

// value scrubs a JSON value: strings, numbers (a number that holds a
// value keeps its digits' shape) and keys.
func (s *scrubber) value(v any) any {
	if s == nil || len(s.values) == 0 {
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
