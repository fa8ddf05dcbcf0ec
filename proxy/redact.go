package proxy

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Marker replaces every credential value the proxy finds.
const Marker = "[redacted]"

// minFragment is the shortest base64 fragment searched for.
const minFragment = 4

// redactor finds credential values in bytes: raw, and in the encodings a
// server may wrap them in. What it replaces is always a whole credential
// or a whole encoding of one: a text that holds part of a credential,
// however long, is left exactly as it is, so that nothing a plugin writes
// and reads back tells it whether it guessed part of one (see
// docs/proxy.md, "What a plugin can observe").
//
// The text is searched once as it is, and, when it holds an escape byte,
// once more as a decoded view in which every %XX escape (either case), JSON
// or JavaScript escape (\uXXXX, surrogate pairs too, \xHH, \/ \" \\ \'),
// and HTML character reference (&#NN; &#xHH; &amp; &lt; &gt; &quot;
// &apos;, HTML5's names of ASCII punctuation such as &period;) stands for
// the character it encodes, so mixed forms match too; a match in the view
// redacts the escapes it came from. A quoted-printable view (=XX, soft line
// breaks: "=" and the white space after it) is searched the same way, of
// the text and of each decoded view. Base64 is matched as the fragment that
// any embedding of the value produces, in its three alignments, standard
// and URL alphabets, of the value's bytes and of its UTF-16 forms, and the
// characters on either side of the fragment must hold the value's first
// and last bits: the base64 text decodes to the whole value. The search
// (see multi) takes a time that does not depend on the credentials' bytes.
type redactor struct {
	mu sync.Mutex               // serialises writers
	st atomic.Pointer[redState] // readers take a snapshot, without locking
}

// redState is an immutable set of patterns; add replaces it whole.
type redState struct {
	known  map[string]bool
	pats   []pattern // values, their transforms and base64 fragments
	keys   map[string]bool
	m      *multi
	lower  *multi // the patterns in lower case, for header names
	minLen int    // the shortest pattern: shorter text holds none
}

func newRedactor() *redactor {
	r := &redactor{}
	r.st.Store(&redState{known: map[string]bool{}, keys: map[string]bool{}, m: newMulti(nil), lower: newMulti(nil)})
	return r
}

// add registers a credential value (and the token after an auth scheme,
// and a Basic pair's parts).
func (r *redactor) add(v string) { r.addAll([]string{v}, nil) }

// addCookie registers cookie values and, for one holding %XX escapes or a
// "+", the values a server's cookie parser makes of it (PHP's $_COOKIE
// decodes "+" as a space, others keep it): a server echoing the decoded
// value hands a step the stored one after jq's @uri. All of them cost one
// rebuild of the patterns.
func (r *redactor) addCookie(vs ...string) { r.addAll(vs, cookieForms(nil, vs)) }

// cookieForms appends to out what cookie parsers make of each value of vs
// that holds %XX escapes or a "+".
func cookieForms(out, vs []string) []string {
	for _, v := range vs {
		if strings.IndexByte(v, '%') < 0 && strings.IndexByte(v, '+') < 0 {
			continue
		}
		if d, err := url.PathUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
		if d, err := url.QueryUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	return out
}

// knows reports whether v is a registered credential value.
func (r *redactor) knows(v string) bool { return r.st.Load().known[v] }

// knowsAll reports whether st knows every value of vs that it would take
// (with valid, only those that are valid UTF-8).
func knowsAll(st *redState, vs []string, valid bool) bool {
	for _, v := range vs {
		if len(v) >= minSecretLen && (!valid || utf8.ValidString(v)) && !st.known[v] {
			return false
		}
	}
	return true
}

// addAll registers each value of vs as add does, and the other forms of
// them in more (each as it is, with no auth scheme read into it), in one
// rebuild.
func (r *redactor) addAll(vs, more []string) {
	if st := r.st.Load(); knowsAll(st, vs, false) && knowsAll(st, more, true) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.st.Load()
	if knowsAll(old, vs, false) && knowsAll(old, more, true) {
		return
	}
	st := &redState{known: make(map[string]bool, len(old.known)+4), keys: make(map[string]bool, len(old.keys)+64),
		pats: slices.Clone(old.pats)}
	for k := range old.known {
		st.known[k] = true
	}
	for k := range old.keys {
		st.keys[k] = true
	}
	for _, m := range more {
		if len(m) >= minSecretLen && utf8.ValidString(m) {
			st.add(m)
		}
	}
	for _, v := range vs {
		if len(v) >= minSecretLen {
			st.addValue(v)
		}
	}
	st.m = newMulti(st.pats)
	low := make([]pattern, len(st.pats))
	for i, p := range st.pats {
		low[i] = pattern{s: strings.ToLower(p.s)}
		if p.edge != nil {
			e := *p.edge
			e.fold = true
			low[i].edge = &e
		}
		if st.minLen == 0 || len(p.s) < st.minLen {
			st.minLen = len(p.s)
		}
	}
	st.lower = newMulti(low)
	r.st.Store(st)
}

// authSchemes are the HTTP authentication schemes whose name a credential
// may start with: the token after one is a whole credential (the scheme is
// public). A value whose first word is anything else is one credential, and
// no part of it is registered on its own.
var authSchemes = []string{"basic", "bearer", "token", "jwt", "digest", "mac", "negotiate", "ntlm", "oauth", "dpop", "hoba"}

// addValue adds v, and the token after an auth scheme and a Basic
// pair's parts.
func (st *redState) addValue(v string) {
	st.add(v)
	i := strings.IndexByte(v, ' ')
	if i <= 0 {
		return
	}
	scheme, rest := v[:i], strings.TrimSpace(v[i+1:])
	if !slices.ContainsFunc(authSchemes, func(s string) bool { return strings.EqualFold(s, scheme) }) {
		return
	}
	if len(rest) >= minSecretLen {
		st.add(rest)
	}
	if strings.EqualFold(scheme, "basic") {
		if d, err := base64.StdEncoding.DecodeString(rest); err == nil && utf8.Valid(d) {
			s := string(d)
			if len(s) >= minSecretLen {
				st.add(s)
			}
			// The password of a Basic pair is a credential of its own
			// (the user name is not secret).
			if j := strings.IndexByte(s, ':'); j >= 0 && len(s)-j-1 >= minSecretLen {
				st.add(s[j+1:])
			}
		}
	}
}

// pat adds a pattern once.
func (st *redState) pat(p pattern) {
	k := p.s
	if p.edge != nil {
		k = fmt.Sprintf("%s\x00%s%d%d%d%d", p.s, p.edge.alphabet[62:], p.edge.leadBits, p.edge.leadVal, p.edge.tailBits, p.edge.tailVal)
	}
	if !st.keys[k] {
		st.keys[k] = true
		st.pats = append(st.pats, p)
	}
}

func (st *redState) add(v string) {
	if st.known[v] {
		return
	}
	st.known[v] = true
	st.pat(pattern{s: v})
	st.addTransforms(v)
	if strings.IndexByte(v, ' ') >= 0 {
		// A form-encoded space; the decoded view keeps "+" as it is.
		st.pat(pattern{s: strings.ReplaceAll(v, " ", "+")})
	}
	st.addBase64([]byte(v))
	if utf8.ValidString(v) {
		// The UTF-16 forms a server (a .NET one, a JavaScript btoa of
		// char codes) may encode in base64.
		units := utf16.Encode([]rune(v))
		le, be := make([]byte, 2*len(units)), make([]byte, 2*len(units))
		for i, u := range units {
			binary.LittleEndian.PutUint16(le[2*i:], u)
			binary.BigEndian.PutUint16(be[2*i:], u)
		}
		st.addBase64(le)
		st.addBase64(be)
	}
}

// The base64 alphabets.
const (
	stdAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	urlAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

// addBase64 adds the fragments that base64 of any text holding d has, at
// each of the three alignments of d in it, in both alphabets: the
// characters made of d's bits alone, with the bits of d that share a
// character with the text around (at most 4 at either end) checked on the
// characters around the fragment.
func (st *redState) addBase64(d []byte) {
	for _, alpha := range []string{stdAlphabet, urlAlphabet} {
		enc := base64.NewEncoding(alpha).WithPadding(base64.NoPadding)
		for k := 0; k < 3; k++ {
			buf := make([]byte, k+len(d))
			copy(buf[k:], d)
			s := enc.EncodeToString(buf)
			bits := 8 * (k + len(d))
			from := (8*k + 5) / 6
			to := bits / 6
			if to-from < minFragment {
				continue
			}
			e := &b64Edge{alphabet: alpha, leadBits: uint8(6*from - 8*k), tailBits: uint8(bits - 6*to)}
			if e.leadBits > 0 {
				v, _ := b64Value(alpha, s[from-1], false)
				e.leadVal = v & (1<<e.leadBits - 1)
			}
			if e.tailBits > 0 {
				v, _ := b64Value(alpha, s[to], false)
				e.tailVal = v >> (6 - e.tailBits)
			}
			if e.leadBits == 0 && e.tailBits == 0 {
				e = nil
			}
			st.pat(pattern{s: s[from:to], edge: e})
		}
	}
}

// addTransforms registers forms of v that a server may echo and a step
// could turn back into v in a line of jq: reversed, in upper and in lower
// case, in hexadecimal (either case). Each is a transform of the whole
// value, matched whole.
func (st *redState) addTransforms(v string) {
	rev := []rune(v)
	slices.Reverse(rev)
	h := hex.EncodeToString([]byte(v))
	for _, f := range []string{string(rev), strings.ToUpper(v), strings.ToLower(v), h, strings.ToUpper(h)} {
		if f != v {
			st.pat(pattern{s: f})
		}
	}
	if m := scientificMantissa(v); m != "" {
		st.pat(pattern{s: m})
	}
}

// scientificMantissa is the mantissa of a number credential (all digits)
// in scientific notation, "7.34519826403" of 734519826403, as a server
// that reads it as a double writes it (Java's Double.toString and Jackson:
// 7.34519826403E11; JavaScript and Python past their plain range:
// 7.34519826403e+11): its digits never stand together there, and a step
// parses the number back (JSON, tonumber) into the credential. The
// mantissa matched whole is the form; "" when v is no such number.
func scientificMantissa(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return ""
		}
	}
	sig := strings.TrimRight(strings.TrimLeft(v, "0"), "0")
	if len(sig) < minSecretLen {
		return ""
	}
	return sig[:1] + "." + sig[1:]
}

type span struct{ from, to int }

// bytes returns b with every credential replaced by Marker. It returns b
// itself when nothing matched.
func (r *redactor) bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	var arr [8]span
	spans := r.st.Load().find(unsafe.String(unsafe.SliceData(b), len(b)), arr[:0])
	if len(spans) == 0 {
		return b
	}
	return splice(b, spans)
}

// bytesInPlace is bytes for a buffer the caller owns: when every match is
// at least as long as Marker, b is rewritten in place without allocating.
func (r *redactor) bytesInPlace(b []byte) []byte {
	out, _ := r.redactInPlace(b)
	return out
}

// redactInPlace is bytesInPlace that also reports whether anything was
// replaced.
func (r *redactor) redactInPlace(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return b, false
	}
	var arr [8]span
	spans := r.st.Load().find(unsafe.String(unsafe.SliceData(b), len(b)), arr[:0])
	if len(spans) == 0 {
		return b, false
	}
	spans = mergeSpans(spans)
	for _, s := range spans {
		if s.to-s.from < len(Marker) {
			return splice(b, spans), true
		}
	}
	w, last := 0, 0
	for _, s := range spans {
		w += copy(b[w:], b[last:s.from])
		w += copy(b[w:], Marker)
		last = s.to
	}
	w += copy(b[w:], b[last:])
	return b[:w], true
}

// mergeSpans sorts spans and joins those that overlap (share a byte): no
// byte of either whole match may show, and one marker stands for them.
// Spans that only touch stay apart, one marker each, so the number of
// markers is the number of separate whole matches, whatever text is next
// to them.
func mergeSpans(spans []span) []span {
	if len(spans) > 1 {
		slices.SortFunc(spans, func(a, c span) int {
			if a.from != c.from {
				return a.from - c.from
			}
			return c.to - a.to
		})
	}
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && s.from < out[n-1].to {
			out[n-1].to = max(out[n-1].to, s.to)
			continue
		}
		out = append(out, s)
	}
	return out
}

// foldedMatch reports whether s holds a credential in any letter case (for
// header names, which HTTP canonicalises), also under escapes (a name may
// hold %XX escapes, and a step can decode them).
func (r *redactor) foldedMatch(s string) bool {
	st := r.st.Load()
	if len(st.pats) == 0 || len(s) < st.minLen {
		return false
	}
	var arr [4]span
	return len(st.findIn(st.lower, true, lowerName(s), arr[:0])) > 0
}

// lowerName is strings.ToLower(s), without a new string for the header
// names most answers have (canonical, as a transport reads them).
func lowerName(s string) string {
	if l, ok := lowerNames[s]; ok {
		return l
	}
	return strings.ToLower(s)
}

var lowerNames = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"Content-Type", "Content-Length", "Date", "Server", "Cache-Control", "Expires",
		"Last-Modified", "Etag", "Vary", "Connection", "Keep-Alive", "Pragma", "Location", "Content-Language",
		"Accept-Ranges", "Age", "X-Content-Type-Options", "X-Frame-Options", "X-Xss-Protection",
		"Strict-Transport-Security", "Access-Control-Allow-Origin", "Referrer-Policy", "Content-Disposition",
		"Transfer-Encoding", "Content-Encoding", "Set-Cookie", "Accept", "User-Agent", "Accept-Language"} {
		m[k] = strings.ToLower(k)
	}
	return m
}()

// string is bytes for strings.
func (r *redactor) string(s string) string {
	if s == "" {
		return s
	}
	var arr [8]span
	spans := r.st.Load().find(s, arr[:0])
	if len(spans) == 0 {
		return s
	}
	// One allocation: splice only reads s's bytes, and the spliced bytes,
	// never written again, are the string (not a copy of s, the splice and
	// a copy of that).
	out := splice(unsafe.Slice(unsafe.StringData(s), len(s)), spans)
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// splice replaces the spans (joined where they overlap) by Marker.
func splice(b []byte, spans []span) []byte {
	spans = mergeSpans(spans)
	out := make([]byte, 0, len(b)+len(spans)*len(Marker))
	last := 0
	for _, s := range spans {
		out = append(out, b[last:s.from]...)
		out = append(out, Marker...)
		last = s.to
	}
	return append(out, b[last:]...)
}

// maxUnwrap is how many layers of escapes find peels off: a server may
// wrap a credential in a double URL encoding, a URL-encoded JSON escape, an
// HTML-escaped URL encoding, and a step could peel each layer in jq.
const maxUnwrap = 4

// shortText is the length under which a text is looked at byte by byte
// rather than by one vectorised scan per byte value: a header value, a
// URL, a request part.
const shortText = 256

// isSpecial marks the bytes that start an escape (a quoted-printable one
// too) or a break.
var isSpecial = func() (t [256]bool) {
	for _, c := range []byte("%\\&=" + breakLeads) {
		t[c] = true
	}
	return t
}()

// hasSpecial reports whether b holds a byte that starts an escape or a
// break (one pass: for short texts).
func hasSpecial(b string) bool {
	for i := 0; i < len(b); i++ {
		if isSpecial[b[i]] {
			return true
		}
	}
	return false
}

// firstEscape is the offset of the first escape byte of b, or -1.
func firstEscape(b string) int {
	first := -1
	for _, c := range []byte{'%', '\\', '&'} {
		if i := strings.IndexByte(b, c); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// find collects the spans of b holding a credential: raw, and in each of
// up to maxUnwrap decoded views, each view decoding the escapes of the one
// before; a match in a view maps back through the views to b.
func (r *redState) find(b string, spans []span) []span {
	return r.findIn(r.m, false, b, spans)
}

// findIn is find with the patterns of m; with fold, each decoded view is
// lower-cased (in ASCII, so offsets hold) before m searches it, for m the
// lower-cased patterns and b lower-cased text.
func (r *redState) findIn(m *multi, fold bool, b string, spans []span) []span {
	// Escapes only shorten text, so text shorter than every pattern
	// holds none, in any form.
	if len(r.pats) == 0 || len(b) < r.minLen {
		return spans
	}
	spans = m.search(b, spans)
	if len(b) < shortText && !hasSpecial(b) {
		// No escape to decode, no break to remove: b as it is was all.
		return spans
	}
	var chain [maxUnwrap]*view
	defer func() {
		for _, v := range chain {
			if v != nil {
				viewPool.Put(v)
			}
		}
	}()
	text := b
	for level := 0; level < maxUnwrap; level++ {
		first := firstEscape(text)
		if first < 0 || len(text) < r.minLen {
			break
		}
		v := viewPool.Get().(*view)
		if !v.decode(text, first) {
			viewPool.Put(v)
			break
		}
		chain[level] = v
		if fold {
			for i, c := range v.text {
				if c >= 'A' && c <= 'Z' {
					v.text[i] = c + 'a' - 'A'
				}
			}
		}
		text = unsafe.String(unsafe.SliceData(v.text), len(v.text))
		found := m.search(text, nil)
		if !fold && hasBreak(text) {
			// Breaks written as escapes (a JSON \u200b, a %0A) are
			// breaks in the view.
			found = r.findUnwrapped(m, text, found)
		}
		if strings.IndexByte(text, '=') >= 0 {
			// Quoted-printable text under escapes: a JSON string's
			// "=\r\n" or "\u003d\u000a" is a soft line break in the
			// step's parsed value.
			found = r.findQuotedPrintable(m, fold, text, found)
		}
		for _, s := range found {
			from, to := s.from, s.to
			for l := level; l >= 0; l-- {
				from, to = chain[l].orig(from, false), chain[l].orig(to-1, true)
			}
			spans = append(spans, span{from, to})
		}
	}
	if !fold && hasBreak(b) {
		spans = r.findUnwrapped(m, b, spans)
	}
	if strings.IndexByte(b, '=') >= 0 {
		spans = r.findQuotedPrintable(m, fold, b, spans)
	}
	return spans
}

// findQuotedPrintable searches b as quoted-printable text: every =XX (either
// case) the byte it encodes, every soft line break gone (see
// view.quotedPrintable).
func (r *redState) findQuotedPrintable(m *multi, fold bool, b string, spans []span) []span {
	v := viewPool.Get().(*view)
	defer viewPool.Put(v)
	if !v.quotedPrintable(b) || len(v.text) < r.minLen {
		return spans
	}
	if fold {
		for i, c := range v.text {
			if c >= 'A' && c <= 'Z' {
				v.text[i] = c + 'a' - 'A'
			}
		}
	}
	text := unsafe.String(unsafe.SliceData(v.text), len(v.text))
	for _, s := range m.search(text, nil) {
		spans = append(spans, span{v.orig(s.from, false), v.orig(s.to-1, true)})
	}
	return spans
}

// breaks are what a server may put inside a long word to wrap it: line
// breaks (MIME base64 at 76 characters, a text cut at 80), and the
// invisible break opportunities a page puts into a long token (a
// zero-width space, a soft hyphen, a word joiner), each of which a step
// removes with one gsub. Markup is a break too (see markupAt): the html
// and xml steps join the text around a tag, a comment or a CDATA section,
// as one gsub in jq does.
var breaks = []string{"\n", "\r", "\u200b", "\u00ad", "\u2060", "\ufeff",
	"&shy;", "&#173;", "&#8203;", "&#x200b;", "&#x200B;"}

// breakLeads are the first bytes of the breaks and of markup.
const breakLeads = "\n\r<]&\xe2\xc2\xef"

// maxMarkup bounds a tag taken for a break, maxComment a comment: longer
// ones are left as they are.
const (
	maxMarkup  = 1024
	maxComment = 128
)

// spaceRun is the length of the run of bytes of set at b[p:], at most
// maxMarkup.
func spaceRun(b string, p int, set string) int {
	n := 0
	for p+n < len(b) && n < maxMarkup && strings.IndexByte(set, b[p+n]) >= 0 {
		n++
	}
	return n
}

// markupAt is the length of the markup at b[p] (a '<' or ']'), or 0: a tag
// (<span class=x>, </span>, <b/>, <wbr>), a comment, a processing
// instruction or declaration, and the brackets of a CDATA section, whose
// content is text.
func markupAt(b string, p int) int {
	rest := b[p:]
	if rest[0] == ']' {
		if strings.HasPrefix(rest, "]]>") {
			return 3
		}
		return 0
	}
	if len(rest) < 3 {
		return 0
	}
	switch c := rest[1]; {
	case strings.HasPrefix(rest, "<![CDATA["):
		return len("<![CDATA[")
	case strings.HasPrefix(rest, "<!--"):
		// A short window: a text of nothing but "<!--" would otherwise
		// cost a window's scan per byte or so.
		if i := strings.Index(rest[4:min(len(rest), maxComment)], "-->"); i >= 0 {
			return 4 + i + 3
		}
		return 0
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '/', c == '!', c == '?':
		end := rest[:min(len(rest), maxMarkup)]
		if i := strings.IndexAny(end[1:], "<>"); i >= 0 && end[1+i] == '>' {
			return i + 2
		}
	}
	return 0
}

// isBreakLead marks the bytes of breakLeads.
var isBreakLead = func() (t [256]bool) {
	for i := 0; i < len(breakLeads); i++ {
		t[breakLeads[i]] = true
	}
	return t
}()

// hasBreak reports whether b holds one of the breaks. It looks for each
// first byte (a vectorised scan per byte for a long text, one pass over a
// short one, such as a header value) and checks only there, rather than
// searching b once per break.
func hasBreak(b string) bool {
	if len(b) < shortText {
		for p := 0; p < len(b); p++ {
			if isBreakLead[b[p]] && breakAt(b, p) > 0 {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(breakLeads); i++ {
		for off := 0; ; {
			j := strings.IndexByte(b[off:], breakLeads[i])
			if j < 0 {
				break
			}
			if breakAt(b, off+j) > 0 {
				return true
			}
			off += j + 1
		}
	}
	return false
}

// breakAt is the length of the break at b[p], or 0.
func breakAt(b string, p int) int {
	switch b[p] {
	case '\n', '\r':
		// With the indentation after it: a wrapped line in indented text.
		return 1 + spaceRun(b, p+1, " \t")
	case '<', ']':
		if n := markupAt(b, p); n > 0 {
			// With the white space after it: pretty-printed markup puts
			// a line break and indentation between two elements.
			return n + spaceRun(b, p+n, " \t\r\n")
		}
		return 0
	case '&', 0xe2, 0xc2, 0xef:
		for _, x := range breaks[2:] {
			if x[0] == b[p] && strings.HasPrefix(b[p:], x) {
				return len(x)
			}
		}
	}
	return 0
}

// findUnwrapped searches b with its breaks removed: a server may split a
// credential or its base64 over two lines, or put break opportunities into
// it, which a step removes with one gsub.
func (r *redState) findUnwrapped(m *multi, b string, spans []span) []span {
	v := viewPool.Get().(*view)
	defer viewPool.Put(v)
	if !v.unwrap(b) || len(v.text) < r.minLen {
		return spans
	}
	text := unsafe.String(unsafe.SliceData(v.text), len(v.text))
	for _, s := range m.search(text, nil) {
		spans = append(spans, balanceCDATA(b, span{v.orig(s.from, false), v.orig(s.to-1, true)}))
	}
	return spans
}

// balanceCDATA widens a span that holds one bracket of a CDATA section
// and not the other to the other, so that the marker replaces the pieces
// of the credential without leaving the XML around them broken.
func balanceCDATA(b string, s span) span {
	in := b[s.from:s.to]
	open, end := strings.LastIndex(in, "<![CDATA["), strings.LastIndex(in, "]]>")
	if open >= 0 && end < open {
		if i := strings.Index(b[s.to:], "]]>"); i >= 0 {
			s.to += i + len("]]>")
		}
	}
	open, end = strings.Index(in, "<![CDATA["), strings.Index(in, "]]>")
	if end >= 0 && (open < 0 || open > end) {
		if i := strings.LastIndex(b[:s.from], "<![CDATA["); i >= 0 {
			s.from = i
		}
	}
	return s
}

// holds reports whether s holds a credential, in any form find knows. It
// serves where text is checked rather than redacted: what a step sends.
func (r *redState) holds(s string) bool {
	var arr [4]span
	return len(r.find(s, arr[:0])) > 0
}

// viewPool keeps decoded views between uses: they live only inside find.
var viewPool = sync.Pool{New: func() any { return new(view) }}

// view is b with its escapes decoded: segs lists each decoded escape in
// order, so a view offset maps back to b.
type view struct {
	text []byte
	segs []seg
	n    int // len(b)
}

// seg is 16 bytes: a view of a text of escapes has one per escape, and a
// response may be 4 MiB of them.
type seg struct {
	at  int32 // offset in text of the decoded bytes
	n   int32 // how many decoded bytes
	src int32 // offset in b of the escape
	w   int32 // its width in b
}

// maxViewText bounds the text a view is made of (offsets are int32).
const maxViewText = 1<<31 - 1

// orig maps a view offset to b: the start of the byte (or of the escape it
// comes from), or with end set, the end of it.
func (v *view) orig(k int, end bool) int {
	i := sort.Search(len(v.segs), func(i int) bool { return int(v.segs[i].at) > k }) - 1
	if i < 0 {
		if end {
			return k + 1
		}
		return k
	}
	s := v.segs[i]
	at, n, src, w := int(s.at), int(s.n), int(s.src), int(s.w)
	if k < at+n {
		if end {
			return src + w
		}
		return src
	}
	o := src + w + (k - at - n)
	if end {
		return o + 1
	}
	return o
}

// reset drops buffers too large to keep in the pool.
func (v *view) reset() {
	if cap(v.text) > 1<<20 {
		v.text = nil
	}
	if cap(v.segs) > 1<<14 {
		v.segs = nil
	}
}

// unwrap fills v with b rid of its breaks, each recorded as an escape that
// decodes to nothing; false when b has none.
func (v *view) unwrap(b string) bool {
	v.n, v.text, v.segs = len(b), v.text[:0], v.segs[:0]
	v.reset()
	if len(b) > maxViewText {
		return false
	}
	// Count the segments first: the slice is made once, at its size.
	count := 0
	for p, last := 0, -1; p < len(b); {
		w := breakAt(b, p)
		if w == 0 {
			p++
			continue
		}
		if last != p {
			count++
		}
		p += w
		last = p
	}
	if count == 0 {
		return false
	}
	v.segs = slices.Grow(v.segs, count)
	if cap(v.text) < len(b) {
		v.text = make([]byte, 0, len(b))
	}
	raw := 0
	for p := 0; p < len(b); {
		w := breakAt(b, p)
		if w == 0 {
			p++
			continue
		}
		if n := len(v.segs); n > 0 && raw == p && int(v.segs[n-1].at) == len(v.text) {
			// Consecutive breaks make one segment.
			v.segs[n-1].w += int32(w)
		} else {
			v.text = append(v.text, b[raw:p]...)
			v.segs = append(v.segs, seg{at: int32(len(v.text)), n: 0, src: int32(p), w: int32(w)})
		}
		p += w
		raw = p
	}
	if len(v.segs) == 0 {
		return false
	}
	v.text = append(v.text, b[raw:]...)
	return true
}

// quotedPrintable fills v with b's quoted-printable escapes decoded and its
// soft line breaks removed; false when b has none. A soft line break is
// "=" and the white space after it (spaces, tabs, CR, LF, any number): the
// line break itself (=\r\n, =\n, a lone =\r), with the padding RFC 2045
// allows before it (Python's quopri drops it), the indentation of an
// obs-fold after it, or the spaces Go's server and Go's client make of
// the line break in a header value; a step removes each with one gsub.
func (v *view) quotedPrintable(b string) bool {
	v.n, v.text, v.segs = len(b), v.text[:0], v.segs[:0]
	v.reset()
	if len(b) > maxViewText {
		return false
	}
	raw := 0
	for off := 0; off < len(b); {
		i := strings.IndexByte(b[off:], '=')
		if i < 0 {
			break
		}
		p := off + i
		var c byte
		n, w := 0, 0
		switch {
		case p+1 < len(b) && isQPSpace[b[p+1]]:
			w = 2
			for p+w < len(b) && isQPSpace[b[p+w]] {
				w++
			}
		case p+2 < len(b):
			h, ok1 := hexVal(b[p+1])
			l, ok2 := hexVal(b[p+2])
			if ok1 && ok2 {
				c, n, w = h<<4|l, 1, 3
			}
		}
		if w == 0 {
			off = p + 1
			continue
		}
		if len(v.segs) == 0 {
			if cap(v.text) < len(b) {
				v.text = make([]byte, 0, len(b))
			}
			// At most one segment per "=" from here: a long text's slice
			// is made once, not grown by doubling.
			if len(b) > 64<<10 {
				v.segs = slices.Grow(v.segs, strings.Count(b[p:], "="))
			}
		}
		v.text = append(v.text, b[raw:p]...)
		v.segs = append(v.segs, seg{at: int32(len(v.text)), n: int32(n), src: int32(p), w: int32(w)})
		if n == 1 {
			v.text = append(v.text, c)
		}
		off = p + w
		raw = off
	}
	if len(v.segs) == 0 {
		return false
	}
	v.text = append(v.text, b[raw:]...)
	return true
}

// isQPSpace marks the white space of a soft line break: what a regular
// expression's \s is in gojq (Go's, [\t\n\f\r ]), and \v.
var isQPSpace = [256]bool{' ': true, '\t': true, '\r': true, '\n': true, '\f': true, '\v': true}

// decode fills v with b's escapes decoded, from first on (the first escape
// byte); false when none decodes.
func (v *view) decode(b string, first int) bool {
	v.n, v.text, v.segs = len(b), v.text[:0], v.segs[:0]
	v.reset()
	if len(b) > maxViewText {
		return false
	}
	var buf [4]byte
	next := [3]int{-2, -2, -2} // next '%', '\\', '&' at or after p (-1: none)
	chars := [3]byte{'%', '\\', '&'}
	p := first
	raw := 0 // start of the raw run not yet copied
	for p >= 0 && p < len(b) {
		nb, wb := decodeUnit(b, p, &buf)
		if wb > 0 {
			if len(v.segs) == 0 {
				if cap(v.text) < len(b) {
					v.text = make([]byte, 0, len(b))
				}
				// At most one segment per escape byte from here: a long
				// text's slice is made once, not grown by doubling.
				if len(b) > 64<<10 {
					v.segs = slices.Grow(v.segs, strings.Count(b[p:], "%")+strings.Count(b[p:], "\\")+strings.Count(b[p:], "&"))
				}
			}
			v.text = append(v.text, b[raw:p]...)
			v.segs = append(v.segs, seg{at: int32(len(v.text)), n: int32(nb), src: int32(p), w: int32(wb)})
			v.text = append(v.text, buf[:nb]...)
			p += wb
			raw = p
		} else {
			p++
		}
		// Find the next escape byte at or after p.
		best := -1
		for k, c := range chars {
			if next[k] != -1 && next[k] < p {
				if i := strings.IndexByte(b[p:], c); i >= 0 {
					next[k] = p + i
				} else {
					next[k] = -1
				}
			}
			if next[k] >= 0 && (best < 0 || next[k] < best) {
				best = next[k]
			}
		}
		p = best
	}
	if len(v.segs) == 0 {
		return false
	}
	v.text = append(v.text, b[raw:]...)
	return true
}

// shortEscape is the byte of JSON's escape \c (c one of n r t b f).
func shortEscape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	}
	return '\f'
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

// maxReference bounds the name of a character reference the views decode
// (HTML allows any number of leading zeros in a numeric one).
const maxReference = 32

// punctuationEntities are HTML5's named character references for ASCII
// punctuation, which an escaper may use for every such character (PHP's
// htmlentities with ENT_HTML5 writes a JWT's dots as &period;) and which an
// HTML step decodes.
var punctuationEntities = map[string]byte{
	"excl": '!', "QUOT": '"', "num": '#', "dollar": '$', "percnt": '%', "AMP": '&',
	"lpar": '(', "rpar": ')', "ast": '*', "midast": '*', "plus": '+', "comma": ',',
	"period": '.', "sol": '/', "colon": ':', "semi": ';', "LT": '<', "equals": '=',
	"GT": '>', "quest": '?', "commat": '@', "lsqb": '[', "lbrack": '[', "bsol": '\\',
	"rsqb": ']', "rbrack": ']', "Hat": '^', "lowbar": '_', "UnderBar": '_', "grave": '`',
	"DiacriticalGrave": '`', "lcub": '{', "lbrace": '{', "verbar": '|', "vert": '|',
	"VerticalLine": '|', "rcub": '}', "rbrace": '}',
}

// legacyEntities are the ASCII character references an HTML parser
// decodes without their semicolon.
var legacyEntities = []struct {
	name string
	c    byte
}{{"amp", '&'}, {"AMP", '&'}, {"lt", '<'}, {"LT", '<'}, {"gt", '>'}, {"GT", '>'}, {"quot", '"'}, {"QUOT", '"'}}

// legacyReference decodes a legacy name at b[q:] (after its "&") that has
// no semicolon, as HTML parsers read it.
func legacyReference(b string, q int, buf *[4]byte) (n, w int) {
	for _, l := range legacyEntities {
		if strings.HasPrefix(b[q:], l.name) {
			buf[0] = l.c
			return 1, 1 + len(l.name)
		}
	}
	return 0, 0
}

// numericReference decodes the numeric character reference at b[p]
// ("&#"): decimal or hexadecimal digits (any number of leading zeros, up
// to maxReference), ended by a semicolon or, as HTML parsers read it, by
// the first byte that is no digit.
func numericReference(b string, p int, buf *[4]byte) (n, w int) {
	q := p + 2
	hex := q < len(b) && (b[q] == 'x' || b[q] == 'X')
	if hex {
		q++
	}
	var r rune
	end := q
	for end < len(b) && end-q < maxReference {
		c := b[end]
		var d byte
		if hex {
			v, ok := hexVal(c)
			if !ok {
				break
			}
			r = r<<4 | rune(v)
		} else {
			if c < '0' || c > '9' {
				break
			}
			d = c - '0'
			r = r*10 + rune(d)
		}
		if r > 0x10ffff {
			return 0, 0
		}
		end++
	}
	if end == q || r == 0 {
		return 0, 0
	}
	w = end - p
	if end < len(b) && b[end] == ';' {
		w++
	}
	return utf8.EncodeRune(buf[:], r), w
}

// decodeUnit decodes the escape at b[p] into buf: n bytes of UTF-8, w bytes
// of input; w == 0 when b[p] starts no escape.
func decodeUnit(b string, p int, buf *[4]byte) (n, w int) {
	switch b[p] {
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
		case '/', '"', '\\', '\'':
			buf[0] = b[p+1]
			return 1, 2
		case 'n', 'r', 't', 'b', 'f':
			// JSON's short escapes: a credential wrapped over lines in
			// a JSON string (base64 at 76 characters) is a line break
			// in the view, as in the step's parsed value.
			buf[0] = shortEscape(b[p+1])
			return 1, 2
		case 'x':
			// A JavaScript string's \xHH (Go's html/template writes + and =
			// so), the character U+00HH.
			if p+3 < len(b) {
				h, ok1 := hexVal(b[p+2])
				l, ok2 := hexVal(b[p+3])
				if ok1 && ok2 {
					return utf8.EncodeRune(buf[:], rune(h<<4|l)), 4
				}
			}
			return 0, 0
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
		if p+2 < len(b) && b[p+1] == '#' {
			return numericReference(b, p, buf)
		}
		q := p + 1
		end := q
		for end < len(b) && end-q < maxReference && b[end] != ';' {
			end++
		}
		if end >= len(b) || b[end] != ';' {
			return legacyReference(b, q, buf)
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
		default:
			c, ok := punctuationEntities[name]
			if !ok {
				// "&amp&lt;": a legacy name without its semicolon, then
				// another reference.
				return legacyReference(b, q, buf)
			}
			r = rune(c)
		}
		if r > 0x10ffff || r == 0 {
			return 0, 0
		}
		return utf8.EncodeRune(buf[:], r), w
	}
	return 0, 0
}
