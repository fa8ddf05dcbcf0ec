package proxy

import (
	"encoding/base64"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Marker replaces every credential value the proxy finds.
const Marker = "[redacted]"

// minFragment is the shortest base64 fragment searched for: shorter ones
// would match ordinary text too often.
const minFragment = 4

// redactor finds credential values in bytes: raw, and in the encodings a
// server may wrap them in. Each value is matched unit by unit, where a unit
// is a raw byte, a %XX escape (either case; "+" for a space), a JSON \uXXXX
// escape (surrogate pairs too) or \/ \" \\, or an HTML character reference
// (&#NN; &#xHH; &amp; &lt; &gt; &quot; &apos;), so mixed forms match too.
// Base64 is matched as the fragments that any embedding of the value
// produces, in its three alignments, standard and URL alphabets.
type redactor struct {
	mu      sync.RWMutex
	known   map[string]bool
	secrets []string // matched unit by unit
	frags   []string // base64 fragments, matched literally
	start   [256]bool
}

func newRedactor() *redactor {
	r := &redactor{known: map[string]bool{}}
	for _, c := range []byte{'%', '\\', '&'} {
		r.start[c] = true
	}
	return r
}

// add registers a credential value (and the token after an auth scheme,
// and a Basic pair's parts).
func (r *redactor) add(v string) {
	if v == "" {
		return
	}
	r.mu.RLock()
	ok := r.known[v]
	r.mu.RUnlock()
	if ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(v)
	if i := strings.IndexByte(v, ' '); i > 0 {
		scheme, rest := v[:i], strings.TrimSpace(v[i+1:])
		if len(rest) >= minSecretLen {
			r.addLocked(rest)
		}
		if strings.EqualFold(scheme, "basic") {
			if d, err := base64.StdEncoding.DecodeString(rest); err == nil && utf8.Valid(d) {
				s := string(d)
				if len(s) >= minSecretLen {
					r.addLocked(s)
				}
				if j := strings.IndexByte(s, ':'); j >= 0 && len(s)-j-1 >= minSecretLen {
					r.addLocked(s[j+1:])
				}
			}
		}
	}
}

func (r *redactor) addLocked(v string) {
	if r.known[v] {
		return
	}
	r.known[v] = true
	r.secrets = append(r.secrets, v)
	r.start[v[0]] = true
	if v[0] == ' ' {
		r.start['+'] = true
	}
	// Longest first, so a value wins over a shorter one inside it.
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := 0; k < 3; k++ {
			buf := make([]byte, k+len(v))
			copy(buf[k:], v)
			s := enc.EncodeToString(buf)
			from := (8*k + 5) / 6
			to := 8 * (k + len(v)) / 6
			if to-from < minFragment || to > len(s) {
				continue
			}
			f := s[from:to]
			if f == v || slices.Contains(r.frags, f) {
				continue
			}
			r.frags = append(r.frags, f)
		}
	}
}

// empty reports whether no value is registered.
func (r *redactor) empty() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.secrets) == 0
}

type span struct{ from, to int }

// bytes returns b with every credential replaced by Marker. It returns b
// itself when nothing matched.
func (r *redactor) bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	r.mu.RLock()
	spans := r.find(unsafe.String(unsafe.SliceData(b), len(b)))
	r.mu.RUnlock()
	if len(spans) == 0 {
		return b
	}
	return splice(b, spans)
}

// string is bytes for strings.
func (r *redactor) string(s string) string {
	if s == "" {
		return s
	}
	r.mu.RLock()
	spans := r.find(s)
	r.mu.RUnlock()
	if len(spans) == 0 {
		return s
	}
	return string(splice([]byte(s), spans))
}

// splice replaces the spans (merged when they overlap or touch) by Marker.
func splice(b []byte, spans []span) []byte {
	slices.SortFunc(spans, func(a, c span) int { return a.from - c.from })
	out := make([]byte, 0, len(b)+len(spans)*len(Marker))
	last := 0
	for k := 0; k < len(spans); k++ {
		s := spans[k]
		for k+1 < len(spans) && spans[k+1].from <= s.to {
			s.to = max(s.to, spans[k+1].to)
			k++
		}
		if s.from < last {
			s.from = last
		}
		out = append(out, b[last:s.from]...)
		out = append(out, Marker...)
		last = s.to
	}
	return append(out, b[last:]...)
}

// find collects the spans of b holding a credential. The caller holds r.mu.
func (r *redactor) find(b string) []span {
	var spans []span
	for _, f := range r.frags {
		spans = indexAll(b, f, spans)
	}
	escaped := false
	for _, c := range []byte{'%', '\\', '&', '+'} {
		if strings.IndexByte(b, c) >= 0 {
			escaped = true
			break
		}
	}
	if !escaped {
		for _, s := range r.secrets {
			spans = indexAll(b, s, spans)
		}
		return spans
	}
	for i := 0; i < len(b); i++ {
		if !r.start[b[i]] {
			continue
		}
		for _, s := range r.secrets {
			if end := matchAt(b, i, s); end > 0 {
				spans = append(spans, span{i, end})
				i = end - 1
				break
			}
		}
	}
	// The raw form too, where an escape-looking byte in a value confused
	// the unit matcher.
	for _, s := range r.secrets {
		if strings.ContainsAny(s, "%\\&+") {
			spans = indexAll(b, s, spans)
		}
	}
	return spans
}

func indexAll(b, s string, spans []span) []span {
	off := 0
	for off < len(b) {
		i := strings.Index(b[off:], s)
		if i < 0 {
			break
		}
		spans = append(spans, span{off + i, off + i + len(s)})
		off += i + len(s)
	}
	return spans
}

// matchAt matches secret s at b[i:] unit by unit and returns the end of the
// match, or -1.
func matchAt(b string, i int, s string) int {
	p, j := i, 0
	for j < len(s) {
		if p >= len(b) {
			return -1
		}
		c := b[p]
		if c == '%' || c == '\\' || c == '&' || c == '+' {
			var buf [4]byte
			n, w := decodeUnit(b, p, &buf)
			if w > 0 && j+n <= len(s) && string(buf[:n]) == s[j:j+n] {
				p += w
				j += n
				continue
			}
		}
		if c != s[j] {
			return -1
		}
		p++
		j++
	}
	return p
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func hex4(b string, p int) (rune, bool) {
	if p+4 > len(b) {
		return 0, false
	}
	var r rune
	for k := 0; k < 4; k++ {
		v, ok := hexVal(b[p+k])
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// decodeUnit decodes the escape at b[p] into buf: n bytes of UTF-8, w bytes
// of input; w == 0 when b[p] starts no escape.
func decodeUnit(b string, p int, buf *[4]byte) (n, w int) {
	switch b[p] {
	case '+':
		buf[0] = ' '
		return 1, 1
	case '%':
		if p+2 < len(b) {
			h, ok1 := hexVal(b[p+1])
			l, ok2 := hexVal(b[p+2])
			if ok1 && ok2 {
				buf[0] = h<<4 | l
				return 1, 3
			}
		}
	case '\\':
		if p+1 >= len(b) {
			return 0, 0
		}
		switch b[p+1] {
		case '/', '"', '\\':
			buf[0] = b[p+1]
			return 1, 2
		case 'u':
			r, ok := hex4(b, p+2)
			if !ok {
				return 0, 0
			}
			w = 6
			if r >= 0xd800 && r < 0xdc00 && p+12 <= len(b) && b[p+6] == '\\' && b[p+7] == 'u' {
				if lo, ok := hex4(b, p+8); ok && lo >= 0xdc00 && lo < 0xe000 {
					r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
					w = 12
				}
			}
			return utf8.EncodeRune(buf[:], r), w
		}
	case '&':
		q := p + 1
		end := q
		for end < len(b) && end-q < 10 && b[end] != ';' {
			end++
		}
		if end >= len(b) || b[end] != ';' {
			return 0, 0
		}
		name := string(b[q:end])
		w = end + 1 - p
		var r rune
		switch {
		case name == "amp":
			r = '&'
		case name == "lt":
			r = '<'
		case name == "gt":
			r = '>'
		case name == "quot":
			r = '"'
		case name == "apos":
			r = '\''
		case len(name) > 2 && (name[1] == 'x' || name[1] == 'X') && name[0] == '#':
			for _, c := range []byte(name[2:]) {
				v, ok := hexVal(c)
				if !ok || r > 0x10ffff {
					return 0, 0
				}
				r = r<<4 | rune(v)
			}
		case len(name) > 1 && name[0] == '#':
			for _, c := range []byte(name[1:]) {
				if c < '0' || c > '9' || r > 0x10ffff {
					return 0, 0
				}
				r = r*10 + rune(c-'0')
			}
		default:
			return 0, 0
		}
		if r > 0x10ffff || r == 0 {
			return 0, 0
		}
		return utf8.EncodeRune(buf[:], r), w
	}
	return 0, 0
}
