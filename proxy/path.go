package proxy

import (
	"fmt"
	"net/url"
	"strings"
)

// maxPathBytes bounds a campus path (with its query).
const maxPathBytes = 8192

// campusPath is a checked, normalised campus path.
type campusPath struct {
	decoded string // each segment percent-decoded, joined with "/"
	escaped string // the canonical escaped form sent on the wire
	query   string // a raw query written in the path after "?", checked
}

// normalisePath checks a campus path as a template produced it. It refuses
// anything that could make a server or a client read another origin or
// another path than the one checked: no scheme, no "//", no backslash, no
// control characters, no fragment, no dot segments (also encoded, also with
// a ";param" tail, also double-encoded), no encoded "/" or "\". Characters
// that are not allowed in a path (space, non-ASCII) are percent-encoded;
// valid escapes are kept as written (upper-case hex).
func normalisePath(p string) (campusPath, error) {
	var cp campusPath
	if len(p) > maxPathBytes {
		return cp, fmt.Errorf("%w: path is longer than %d bytes", ErrRefused, maxPathBytes)
	}
	if p == "" || p[0] != '/' {
		return cp, fmt.Errorf("%w: path %q must start with /", ErrRefused, p)
	}
	if strings.HasPrefix(p, "//") {
		return cp, fmt.Errorf("%w: path %q starts with //", ErrRefused, p)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c < 0x20 || c == 0x7f:
			return cp, fmt.Errorf("%w: path has a control character", ErrRefused)
		case c == '\\':
			return cp, fmt.Errorf("%w: path %q has a backslash", ErrRefused, p)
		case c == '#':
			return cp, fmt.Errorf("%w: path %q has a fragment (#)", ErrRefused, p)
		}
	}
	if simplePath(p) {
		cp.decoded, cp.escaped = p, p
		return cp, nil
	}
	if d, ok := escapedPath(p); ok {
		cp.decoded, cp.escaped = d, p
		return cp, nil
	}
	return normaliseSlow(p)
}

// escapedPath is the decoded form of p when p is a simple path (see
// simplePath) but for escapes already in canonical form (%XX, upper-case
// hex) of bytes that change nothing normaliseSlow checks: no "/", "\",
// ".", "%", ";" or control character comes of one. A template's
// interpolations are escaped so (non-ASCII text, spaces); normaliseSlow
// would return p itself as the escaped form and this decoded form.
func escapedPath(p string) (string, bool) {
	escapes := 0
	seg := 1 // start of the current segment
	for i := 1; i <= len(p); i++ {
		if i < len(p) {
			switch c := p[i]; {
			case c == '%':
				if i+2 >= len(p) || !upperHexDigit(p[i+1]) || !upperHexDigit(p[i+2]) {
					return "", false
				}
				switch d := unhex(p[i+1])<<4 | unhex(p[i+2]); {
				case d < 0x20 || d == 0x7f, d == '/', d == '\\', d == '.', d == '%', d == ';':
					return "", false
				}
				escapes++
				i += 2
				continue
			case c != '/':
				if !pathByteOK(c) {
					return "", false
				}
				continue
			}
		}
		// A segment's name (before ";") is a dot segment only as written:
		// no escape stands for a "." or a ";".
		s := p[seg:i]
		if j := strings.IndexByte(s, ';'); j >= 0 {
			s = s[:j]
		}
		if (s == "" && i < len(p)) || s == "." || s == ".." {
			return "", false
		}
		seg = i + 1
	}
	if escapes == 0 {
		return "", false
	}
	d := make([]byte, 0, len(p)-2*escapes)
	for i := 0; i < len(p); i++ {
		if p[i] == '%' {
			d = append(d, unhex(p[i+1])<<4|unhex(p[i+2]))
			i += 2
			continue
		}
		d = append(d, p[i])
	}
	return string(d), true
}

func upperHexDigit(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}

// normaliseSlow is normalisePath after the common checks, for any path.
func normaliseSlow(p string) (campusPath, error) {
	var cp campusPath
	path := p
	if i := strings.IndexByte(p, '?'); i >= 0 {
		path, cp.query = p[:i], p[i+1:]
		if _, err := url.ParseQuery(cp.query); err != nil {
			return cp, fmt.Errorf("%w: the query in path %q is malformed", ErrRefused, p)
		}
		cp.query = escapeQuery(cp.query)
	}
	segs := strings.Split(path[1:], "/")
	var dec, esc strings.Builder
	dec.Grow(len(path))
	esc.Grow(len(path) + 8)
	for i, s := range segs {
		if s == "" && i != len(segs)-1 {
			return cp, fmt.Errorf("%w: path %q has an empty segment (//)", ErrRefused, p)
		}
		d, err := url.PathUnescape(s)
		if err != nil {
			return cp, fmt.Errorf("%w: path %q has a malformed %% escape", ErrRefused, p)
		}
		if err := checkSegment(d, p); err != nil {
			return cp, err
		}
		if strings.IndexByte(d, '%') >= 0 {
			// A server that decodes twice would see this: check it too.
			if d2, err := url.PathUnescape(d); err == nil {
				if err := checkSegment(d2, p); err != nil {
					return cp, err
				}
			}
		}
		dec.WriteByte('/')
		dec.WriteString(d)
		esc.WriteByte('/')
		escapeSegment(&esc, s)
	}
	cp.decoded, cp.escaped = dec.String(), esc.String()
	return cp, nil
}

func checkSegment(d, p string) error {
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c == '/' || c == '\\' {
			return fmt.Errorf("%w: path %q has an encoded slash or backslash", ErrRefused, p)
		}
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: path has an encoded control character", ErrRefused)
		}
	}
	name := d
	if i := strings.IndexByte(name, ';'); i >= 0 {
		name = name[:i]
	}
	if name == "." || name == ".." {
		return fmt.Errorf("%w: path %q has a dot segment", ErrRefused, p)
	}
	return nil
}

const hexUpper = "0123456789ABCDEF"

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// pathByteOK reports whether c may stand unescaped in a path segment
// (RFC 3986 pchar without "%").
func pathByteOK(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	switch c {
	case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@':
		return true
	}
	return false
}

// escapeSegment writes a raw (already validated) segment in canonical form.
func escapeSegment(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte('%')
			b.WriteByte(upperHex(s[i+1]))
			b.WriteByte(upperHex(s[i+2]))
			i += 2
		case pathByteOK(c):
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexUpper[c>>4])
			b.WriteByte(hexUpper[c&15])
		}
	}
}

func upperHex(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// escapeQuery percent-encodes bytes a query may not hold raw (space,
// non-ASCII), keeping valid escapes and the separators.
func escapeQuery(q string) string {
	ok := true
	for i := 0; i < len(q); i++ {
		c := q[i]
		if !(pathByteOK(c) || c == '/' || c == '?' || c == '%') {
			ok = false
			break
		}
	}
	if ok {
		return q
	}
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if pathByteOK(c) || c == '/' || c == '?' || c == '%' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexUpper[c>>4])
		b.WriteByte(hexUpper[c&15])
	}
	return b.String()
}

// prefixMatch reports whether the decoded path lies under a declared prefix:
// a prefix ending in "/" matches by string; one without matches itself or
// itself followed by "/".
func prefixMatch(decoded, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(decoded, prefix)
	}
	return decoded == prefix || strings.HasPrefix(decoded, prefix+"/")
}

// simplePath reports whether p needs no decoding or escaping and holds no
// empty or dot segment: the common case, checked without allocating.
func simplePath(p string) bool {
	seg := 1 // start of the current segment
	for i := 1; i <= len(p); i++ {
		if i < len(p) {
			c := p[i]
			if c != '/' {
				if !pathByteOK(c) {
					return false
				}
				continue
			}
		}
		s := p[seg:i]
		if j := strings.IndexByte(s, ';'); j >= 0 {
			s = s[:j]
		}
		if (s == "" && i < len(p)) || s == "." || s == ".." {
			return false
		}
		seg = i + 1
	}
	return true
}
