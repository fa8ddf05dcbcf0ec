package proxy

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
)

// readBody reads a response body, decompressing gzip or deflate itself, and
// refuses more than limit bytes after decompression.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	var r io.Reader = resp.Body
	switch ce := strings.ToLower(strings.TrimSpace(hget(resp.Header, "Content-Encoding"))); ce {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("the response's gzip body is corrupt")
		}
		defer zr.Close()
		r = zr
	case "deflate":
		// Servers send both zlib-wrapped and raw deflate under this name.
		br := bufio.NewReader(resp.Body)
		if head, _ := br.Peek(2); len(head) == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, fmt.Errorf("the response's deflate body is corrupt")
			}
			defer zr.Close()
			r = zr
		} else {
			fr := flate.NewReader(br)
			defer fr.Close()
			r = fr
		}
	default:
		return nil, fmt.Errorf("the response uses an unsupported content encoding %q", ce)
	}
	return readLimited(r, resp.ContentLength, limit)
}

// readLimited reads r whole, refusing more than limit bytes; size is a
// hint (the Content-Length, or -1).
func readLimited(r io.Reader, size, limit int64) ([]byte, error) {
	var buf []byte
	if size > 0 && size <= limit {
		// The common case: a body of the declared size, read into a
		// buffer of exactly that size; one more byte is looked for in a
		// scratch byte, so the buffer needs no room for it.
		buf = make([]byte, size)
		for n := 0; n < len(buf); {
			m, err := r.Read(buf[n:])
			n += m
			if err == io.EOF {
				return buf[:n], nil
			}
			if err != nil {
				return nil, fmt.Errorf("cannot read the response body: %v", err)
			}
		}
		more, err := readsMore(r)
		if err != nil {
			return nil, fmt.Errorf("cannot read the response body: %v", err)
		}
		if more < 0 {
			return buf, nil
		}
		// Longer than declared: keep reading, within the limit.
		if size >= limit {
			return nil, fmt.Errorf("%w: the response body is more than %d bytes", ErrLimit, limit)
		}
		nb := make([]byte, size, min(2*size, limit+1))
		copy(nb, buf)
		buf = append(nb, byte(more))
	} else {
		c := int64(4096)
		if size == 0 {
			c = 1
		}
		buf = make([]byte, 0, min(c, limit+1))
	}
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, fmt.Errorf("%w: the response body is more than %d bytes", ErrLimit, limit)
			}
			nc := min(int64(cap(buf))*2, limit+1)
			nb := make([]byte, len(buf), nc)
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read the response body: %v", err)
		}
	}
	if int64(len(buf)) > limit {
		return nil, fmt.Errorf("%w: the response body is more than %d bytes", ErrLimit, limit)
	}
	return buf, nil
}

// scratchPool holds single bytes to look past the end of a body with.
var scratchPool = sync.Pool{New: func() any { return new([1]byte) }}

// readsMore reads one byte from r: the byte, or -1 at the end.
func readsMore(r io.Reader) (int, error) {
	b := scratchPool.Get().(*[1]byte)
	defer scratchPool.Put(b)
	for {
		n, err := r.Read(b[:])
		if n > 0 {
			return int(b[0]), nil
		}
		if err == io.EOF {
			return -1, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// decodeText decodes a text body to UTF-8 for redaction; redacted reports
// whether anything was replaced in the bytes before decoding.
func (r *redactor) decodeText(body []byte, mt, label string) (text []byte, redacted bool) {
	text = toUTF8(body, mt, label)
	if len(text) != len(body) || len(text) > 0 && &text[0] != &body[0] {
		// Decoded from another charset: a credential the server sent
		// as it is, under a label that reads its bytes as other
		// characters (UTF-16, a GB18030 lead byte before it, UTF-7's
		// "+" that starts a base64 run, as in a PHP session's), is
		// redacted in the bytes first.
		if raw := r.bytes(body); len(raw) != len(body) || &raw[0] != &body[0] {
			if isUTF7(label) {
				// A UTF-7 run that was a credential's base64 whole
				// ("+" and "-" around it) is the marker alone.
				raw = bytes.ReplaceAll(raw, utf7Marker, []byte(Marker))
			}
			text = toUTF8(raw, mt, label)
			redacted = true
		}
	}
	return text, redacted
}

// utf7Marker is the marker where a UTF-7 base64 run was.
var utf7Marker = []byte("+" + Marker + "-")

// digestHeaders state a digest of the body as the server sent it: beside a
// body the step sees decoded or redacted, they would tell it about the
// bytes it does not see (a digest of the unredacted body is a way to test
// a guess of the credential offline), so they never pass.
var digestHeaders = []string{"Content-Md5", "Digest", "Repr-Digest", "Content-Digest", "Want-Digest"}

// redactedHeaders describe the body as the server sent it (its tag, often
// a hash of it; the range it is of the whole): they pass beside a body
// nothing was redacted from, and are dropped beside one that was.
var redactedHeaders = []string{"Etag", "Content-Range", "X-Original-Content-Length", "X-Uncompressed-Content-Length"}

// The header of a response describes the body the step sees, not the one
// the server sent: the body is decompressed (Content-Encoding goes), its
// Content-Length is its length as the step has it (none when the step has
// no body: a binary one), and no digest of the server's bytes passes; with
// a redacted body, neither does anything else derived from those bytes.
// The length of a redacted body, or of a compressed one, would otherwise
// tell a plugin the length of what was redacted, or how well its guess
// compressed with a credential. finish applies these rules in the one pass
// over the header that also filters and redacts it: dropContentEncoding
// first, representationDrop for each name, the new Content-Length last.

// dropContentEncoding removes a Content-Encoding other than identity: the
// body is decompressed.
func dropContentEncoding(h http.Header) {
	if ce := hget(h, "Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		delete(h, "Content-Encoding")
	}
}

// representationDrop reports whether a header describes the server's bytes
// rather than the body the step sees: a digest, a length, and beside a
// redacted body what else derives from the bytes.
func representationDrop(k string, redacted bool) bool {
	kind, ok := headerKinds[k]
	if !ok {
		// Not a canonical name the table holds (a transport
		// canonicalises every name it reads; a test's may not be).
		kind = headerKinds[http.CanonicalHeaderKey(k)]
	}
	return kind&kindDigest != 0 || redacted && kind&kindTag != 0 || kind&kindLength != 0
}

// The kinds of header representationDrop tells apart.
const (
	kindDigest = 1 << iota // digestHeaders
	kindTag                // redactedHeaders
	kindLength             // Content-Length
)

// headerKinds maps canonical header names to their kind: those of
// digestHeaders, redactedHeaders and Content-Length, and (kind 0) the
// names most answers have, so that theirs are not canonicalised again.
var headerKinds = func() map[string]uint8 {
	m := map[string]uint8{"Content-Length": kindLength}
	for k := range lowerNames {
		m[k] |= 0
	}
	for _, k := range digestHeaders {
		m[k] |= kindDigest
	}
	for _, k := range redactedHeaders {
		m[k] |= kindTag
	}
	return m
}()

// textual reports whether a media type is text the steps can read.
func textual(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"),
		mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "application/x-javascript", mt == "application/ecmascript",
		mt == "application/x-www-form-urlencoded", mt == "application/xhtml+xml":
		return true
	}
	return false
}

// mediaType parses Content-Type into the media type and its charset label;
// an absent or malformed type is sniffed from the body, redacted: a
// sniffer reads magic numbers at the start ("ID3", "BM", "wOF2"), and a
// page that shows the step's text right before a credential ("ID" and the
// session) would otherwise be binary or text as the credential's first
// characters make the magic number or not.
func mediaType(h http.Header, body []byte, red *redactor) (mt, label string) {
	mt, label = parseContentType(hget(h, "Content-Type"))
	if mt == "" || mt == "application/octet-stream" {
		if len(body) == 0 {
			return "text/plain", label
		}
		s, params, _ := mime.ParseMediaType(http.DetectContentType(red.bytes(body)))
		if strings.HasPrefix(s, "text/") {
			t := bytes.TrimLeft(body, " \t\r\n\xef\xbb\xbf")
			if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
				s = "application/json"
			}
			mt = s
			if label == "" {
				label = params["charset"]
			}
		} else if mt == "" {
			mt = s
		}
	}
	return mt, label
}

// parseContentType reads "type/subtype; charset=x" without allocating for
// the common forms; anything unusual goes through mime.ParseMediaType.
func parseContentType(ct string) (mt, label string) {
	if ct == "" {
		return "", ""
	}
	base, params, _ := strings.Cut(ct, ";")
	base = strings.TrimSpace(base)
	simple := strings.IndexByte(base, '/') > 0
	for i := 0; i < len(base) && simple; i++ {
		switch c := base[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '/', c == '+', c == '-', c == '.':
		default:
			simple = false
		}
	}
	params = strings.TrimSpace(params)
	if simple && params == "" {
		return base, ""
	}
	if simple && len(params) > 8 && strings.EqualFold(params[:8], "charset=") && strings.IndexAny(params[8:], ";\" \t") < 0 {
		return base, params[8:]
	}
	m, ps, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", ""
	}
	return m, ps["charset"]
}

var xmlEncoding = regexp.MustCompile(`^\s*<\?xml[^>]*encoding=["']([A-Za-z0-9._:-]+)["']`)

// toUTF8 decodes a text body to UTF-8: a byte-order mark first, then the
// declared charset, then an HTML meta or XML declaration, then UTF-8 if the
// bytes are valid, else GB18030 (a superset of GBK and GB2312, what campus
// pages without a label use). Invalid sequences become U+FFFD.
func toUTF8(body []byte, mt, label string) []byte {
	switch {
	case bytes.HasPrefix(body, []byte("\xef\xbb\xbf")):
		return validUTF8(body[3:])
	case bytes.HasPrefix(body, []byte("\xff\xfe")):
		return decodeWith(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), body)
	case bytes.HasPrefix(body, []byte("\xfe\xff")):
		return decodeWith(unicode.UTF16(unicode.BigEndian, unicode.UseBOM), body)
	}
	if label != "" {
		if isUTF7(label) {
			return decodeUTF7(body)
		}
		if strings.EqualFold(label, "utf-8") || strings.EqualFold(label, "utf8") {
			return validUTF8(body)
		}
		if enc, name := charset.Lookup(label); enc != nil {
			if name == "utf-8" {
				return validUTF8(body)
			}
			return decodeWith(enc, body)
		}
	}
	if utf8.Valid(body) {
		return body
	}
	head := body
	if len(head) > 1024 {
		head = head[:1024]
	}
	if strings.Contains(mt, "html") {
		if enc, name, certain := charset.DetermineEncoding(head, mt); certain && name != "utf-8" {
			return decodeWith(enc, body)
		}
	}
	if m := xmlEncoding.FindSubmatch(head); m != nil {
		if enc, name := charset.Lookup(string(m[1])); enc != nil && name != "utf-8" {
			return decodeWith(enc, body)
		}
	}
	return decodeWith(simplifiedchinese.GB18030, body)
}

func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

func decodeWith(enc encoding.Encoding, b []byte) []byte {
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return validUTF8(b)
	}
	return validUTF8(out)
}

// isUTF7 reports whether a charset label names UTF-7, which the WHATWG
// encodings do not know: a body in it is ASCII that a step could decode
// (base64 of UTF-16) back into a credential the redactor did not see, so
// the proxy decodes it itself and redacts the text.
func isUTF7(label string) bool {
	l := strings.TrimSpace(label)
	ascii := isASCII(l)
	if !ascii {
		// (strings.ToLower maps a few runes outside ASCII to letters
		// inside it, such as U+0130 to "i".)
		l = strings.ToLower(l)
	}
	for _, n := range utf7Labels {
		// For ASCII text EqualFold is ToLower's comparison, without
		// the new string every answer's "UTF-8" label would cost.
		if ascii && len(l) == len(n) && strings.EqualFold(l, n) || l == n {
			return true
		}
	}
	return false
}

var utf7Labels = [...]string{"utf-7", "utf7", "x-utf-7", "unicode-1-1-utf-7", "csunicode11utf7"}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// decodeUTF7 decodes RFC 2152's UTF-7: "+" starts base64 of UTF-16 big
// endian, ended by "-" (dropped) or any byte outside base64; "+-" is "+".
// What is not valid (a byte above 0x7f, a lone surrogate) is U+FFFD. The
// text is never longer than a few bytes more than b.
func decodeUTF7(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
	var pending rune = -1 // a high surrogate waiting for its low one
	emit := func(r rune) {
		if pending >= 0 {
			if r >= 0xdc00 && r < 0xe000 {
				out = utf8.AppendRune(out, utf16.DecodeRune(pending, r))
				pending = -1
				return
			}
			out = utf8.AppendRune(out, utf8.RuneError)
			pending = -1
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			pending = r
		case r >= 0xdc00 && r < 0xe000:
			out = utf8.AppendRune(out, utf8.RuneError)
		default:
			out = utf8.AppendRune(out, r)
		}
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c != '+' {
			if c >= 0x80 {
				emit(utf8.RuneError)
			} else {
				emit(rune(c))
			}
			i++
			continue
		}
		i++
		if i < len(b) && b[i] == '-' {
			emit('+')
			i++
			continue
		}
		var acc uint32
		bits := 0
		for i < len(b) {
			v, ok := b64Value(stdAlphabet, b[i], false)
			if !ok {
				break
			}
			acc = acc<<6 | uint32(v)
			bits += 6
			if bits >= 16 {
				bits -= 16
				emit(rune(acc >> bits & 0xffff))
			}
			i++
		}
		if i < len(b) && b[i] == '-' {
			i++
		}
	}
	if pending >= 0 {
		out = utf8.AppendRune(out, utf8.RuneError)
	}
	return out
}
