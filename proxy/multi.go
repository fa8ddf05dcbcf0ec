package proxy

import (
	"crypto/rand"
	"encoding/binary"
	"slices"
	"sync"
)

// multi finds whole patterns in a text, in a time that depends on the
// text's length, on which public class of bytes each of its bytes is in,
// and on the patterns' lengths, but never on the patterns' bytes: nothing a
// plugin can time tells it that part of its text is part of a credential.
//
// For each distinct pattern length L (and byte class, below), every L-byte
// window of the text is hashed with a keyed polynomial hash (a base drawn
// at random for the process, wrapping at 2^64) and looked up in a bit
// filter of the patterns' hashes; a window that passes is looked up in an
// exact table of the patterns' full hashes, and one found there is compared
// byte by byte, in constant time. A window that is not a pattern passes
// the filter by chance alone: where that happens depends on the key, which
// a plugin cannot see, so it cannot aim a probe at a pattern's prefix. The
// work is O(len(text) × number of lengths) whatever the bytes are.
//
// A pattern made only of the bytes of a public class (hexadecimal digits,
// the base64 alphabets, a cookie's octets) can only lie inside a run of
// such bytes, so only windows inside long enough runs are hashed for it:
// which runs a text has is a fact of the text, not of the credential (the
// class of a pattern is part of its shape, as its length is).
type multi struct {
	pats   []pattern
	groups []group // by class, then length
	// byClass[c] is the range of groups of class c, minLen[c] their
	// shortest length (0: none).
	byClass [nClasses][2]int
	minLen  [nClasses]int
	// nestLen[c] is the shortest length of the groups of class c or a
	// narrower one (0: none): the shortest run scanClass looks into.
	nestLen [nClasses]int
	maxLen  int
	bits    *[filterWords]uint64 // the filter, indexed by the top filterBits bits of a key
	exact   map[uint64][]int32   // key -> patterns
}

// pattern is a text to find, with what a base64 fragment also needs of
// the characters around it to encode the whole value.
type pattern struct {
	s    string
	edge *b64Edge
}

// b64Edge is what makes a base64 fragment a whole encoding: the value's
// first bits are the low lead bits of the character before the fragment,
// its last bits the high tail bits of the character after it.
type b64Edge struct {
	alphabet           string
	leadBits, tailBits uint8
	leadVal, tailVal   byte
	fold               bool // the text is in lower case: either case of a letter may be meant
}

// group is the patterns of one length and class.
type group struct {
	n    int
	cls  uint8
	pow  uint64 // hashBase^n
	salt uint64 // added to a window's hash to make its key
}

// The byte classes, nested: every hexadecimal digit is in the base64
// alphabets, every byte of those is a cookie octet, and those and the
// space are the bytes of a value with an auth scheme before it.
const (
	clsAny = iota
	clsSpaced
	clsCookie
	clsB64
	clsHex
	nClasses
)

// byteClass is the narrowest class of each byte.
var byteClass = func() (t [256]uint8) {
	t[' '] = clsSpaced
	for c := 0x21; c < 0x7f; c++ {
		switch c {
		case '"', ',', ';', '\\':
		default:
			t[c] = clsCookie
		}
	}
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_") {
		t[c] = clsB64
	}
	for _, c := range []byte("0123456789abcdefABCDEF") {
		t[c] = clsHex
	}
	return t
}()

// hashBase is the process's key: odd, drawn at random once.
var hashBase, hashSalts = func() (uint64, [8]uint64) {
	var b [72]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("proxy: no randomness for the redactor's key: " + err.Error())
	}
	var salts [8]uint64
	for i := range salts {
		salts[i] = binary.LittleEndian.Uint64(b[8+8*i:])
	}
	return binary.LittleEndian.Uint64(b[:8]) | 1, salts
}()

// hashOf is the hash of s as the scan computes it for a window.
func hashOf(s string) uint64 {
	var h uint64
	for i := 0; i < len(s); i++ {
		h = h*hashBase + uint64(s[i]) + 1
	}
	return h
}

// The powers of hashBase that prefixHashes steps by.
var hashBase2, hashBase4 = hashBase * hashBase, hashBase * hashBase * hashBase * hashBase

// prefixHashes sets h[0] to 0 and h[j+1] to the hash of b[:j+1] (len(h)
// is len(b)+1): h[j+1] = h[j]*hashBase + b[j] + 1. Four bytes a step, each
// step's hashes computed from the one before it (x*B, x*B², (x*B²+…)*B,
// x*B⁴), so that the chain from one step to the next is one multiply
// rather than four. The same work for any bytes.
func prefixHashes(h []uint64, b string) {
	h = h[:len(b)+1]
	h[0] = 0
	// (The powers in registers, and one bounds check per step for the
	// bytes and one for the hashes.)
	base, base2, base4 := hashBase, hashBase2, hashBase4
	var x uint64
	j := 0
	for ; j+4 <= len(b); j += 4 {
		q := b[j : j+4]
		c0, c1, c2, c3 := uint64(q[0])+1, uint64(q[1])+1, uint64(q[2])+1, uint64(q[3])+1
		p2 := c0*base + c1
		p3 := p2*base + c2
		p4 := p3*base + c3
		x1 := x*base + c0
		x2 := x*base2 + p2
		x3 := x2*base + c2
		x4 := x*base4 + p4
		w := h[j+1 : j+5 : j+5]
		w[0], w[1], w[2], w[3] = x1, x2, x3, x4
		x = x4
	}
	for ; j < len(b); j++ {
		x = x*hashBase + uint64(b[j]) + 1
		h[j+1] = x
	}
}

func powBase(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= hashBase
	}
	return p
}

func classOf(s string) uint8 {
	c := uint8(clsHex)
	for i := 0; i < len(s); i++ {
		c = min(c, byteClass[s[i]])
	}
	return c
}

func newMulti(pats []pattern) *multi {
	mm := &multi{pats: pats}
	if len(pats) == 0 {
		return mm
	}
	type gk struct {
		n   int
		cls uint8
	}
	seen := map[gk]int{}
	for _, p := range pats {
		k := gk{len(p.s), classOf(p.s)}
		if _, ok := seen[k]; !ok {
			seen[k] = 0
			mm.groups = append(mm.groups, group{n: k.n, cls: k.cls})
		}
	}
	slices.SortFunc(mm.groups, func(a, b group) int {
		if a.cls != b.cls {
			return int(a.cls) - int(b.cls)
		}
		return a.n - b.n
	})
	for i := range mm.groups {
		g := &mm.groups[i]
		g.pow = powBase(g.n)
		g.salt = hashSalts[g.cls] ^ uint64(g.n)*0x9e3779b97f4a7c15
		seen[gk{g.n, g.cls}] = i
		c := g.cls
		if mm.byClass[c][1] == 0 {
			mm.byClass[c] = [2]int{i, i + 1}
			mm.minLen[c] = g.n
		} else {
			mm.byClass[c][1] = i + 1
		}
		mm.maxLen = max(mm.maxLen, g.n)
	}
	for c := nClasses - 1; c >= 0; c-- {
		mm.nestLen[c] = mm.minLen[c]
		if c+1 < nClasses && mm.nestLen[c+1] > 0 && (mm.nestLen[c] == 0 || mm.nestLen[c+1] < mm.nestLen[c]) {
			mm.nestLen[c] = mm.nestLen[c+1]
		}
	}
	mm.bits = new([filterWords]uint64)
	mm.exact = make(map[uint64][]int32, len(pats))
	for pi, p := range pats {
		g := mm.groups[seen[gk{len(p.s), classOf(p.s)}]]
		key := hashOf(p.s) + g.salt
		idx := key >> (64 - filterBits)
		mm.bits[idx>>6] |= 1 << (idx & 63)
		mm.exact[key] = append(mm.exact[key], int32(pi))
	}
	return mm
}

// The filter has 2^filterBits bits (16 KiB: it stays in the first-level
// cache with the hashes it is read with).
const (
	filterBits  = 17
	filterWords = 1 << filterBits / 64
)

// hashPool keeps the prefix hash buffers of scans.
var hashPool = sync.Pool{New: func() any { return new([]uint64) }}

// hashes is a scan's prefix hash buffer, taken from the pool when a run
// is first long enough to hash: a text with none (most header values, a
// short path) takes nothing. h holds the prefix hashes of b[from:to] (h[j]
// the hash of b[from:from+j]); a run inside that text, of a narrower class
// (the classes nest), is looked up in them rather than hashed again: a
// window's key is the difference of two prefix hashes from any start
// before it.
type hashes struct {
	buf      *[]uint64
	h        []uint64
	from, to int
}

// cover returns prefix hashes of b from some start at or before cs, for
// the text up to ce, and the index in them of cs's.
func (hp *hashes) cover(b string, cs, ce int) ([]uint64, int) {
	if hp.h != nil && cs >= hp.from && ce <= hp.to {
		return hp.h, cs - hp.from
	}
	if hp.buf == nil {
		hp.buf = hashPool.Get().(*[]uint64)
	}
	h := *hp.buf
	if cap(h) < ce-cs+1 {
		h = make([]uint64, ce-cs+1)
	}
	h = h[:ce-cs+1]
	prefixHashes(h, b[cs:ce])
	if cap(h) <= 1<<16 {
		*hp.buf = h
	}
	hp.h, hp.from, hp.to = h, cs, ce
	return h, 0
}

func (hp *hashes) put() {
	if hp.buf != nil {
		hashPool.Put(hp.buf)
	}
}

// scanChunk is how many window starts one prefix hash buffer serves.
const scanChunk = 4096

// search appends the span of every occurrence of every pattern in b (in no
// particular order).
func (mm *multi) search(b string, spans []span) []span {
	if len(mm.groups) == 0 {
		return spans
	}
	var hp hashes
	defer hp.put()
	if mm.minLen[clsAny] > 0 {
		spans = mm.scanRun(b, 0, len(b), clsAny, &hp, spans)
	}
	if mm.nestLen[clsAny+1] > 0 {
		spans = mm.scanClass(b, 0, len(b), clsAny+1, &hp, spans)
	}
	return spans
}

// scanClass scans the runs of b[from:to]'s bytes of class c (or a narrower
// one) that are long enough for the patterns of class c or a narrower one
// (nestLen[c]), and inside each, the runs of the next class: the classes
// nest, so a run of a narrower class lies inside a run of each wider one,
// and a text is walked once for all of them rather than once per class. A
// run of n bytes or more holds one of every n positions, so only those are
// probed; a probe inside a run finds the run's ends. The cost is a probe
// per n bytes and the length of the runs probed into, whatever the
// credentials' bytes.
func (mm *multi) scanClass(b string, from, to int, c uint8, hp *hashes, spans []span) []span {
	n := mm.nestLen[c]
	prev := from // where the last run probed ended: the next starts after it
	for p := from + n - 1; p < to; {
		if byteClass[b[p]] < c {
			p += n
			continue
		}
		s, e := runStart(b, prev, p, c), runEnd(b[:to], p+1, c)
		if e-s >= n {
			if m := mm.minLen[c]; m > 0 && e-s >= m {
				spans = mm.scanRun(b, s, e, c, hp, spans)
			}
			if c+1 < nClasses {
				if m := mm.nestLen[c+1]; m > 0 && e-s >= m {
					spans = mm.scanClass(b, s, e, c+1, hp, spans)
				}
			}
		}
		prev = e
		p = e + n
	}
	return spans
}

// runStart is where the run of bytes of class c or a narrower one that
// ends at b[p] starts, at lim or after; runEnd where the one that starts
// at b[e] ends. Four bytes a step, then one at a time.
func runStart(b string, lim, p int, c uint8) int {
	s := p
	for s-4 >= lim {
		w := b[s-4 : s]
		if min(byteClass[w[0]], byteClass[w[1]], byteClass[w[2]], byteClass[w[3]]) < c {
			break
		}
		s -= 4
	}
	for s > lim && byteClass[b[s-1]] >= c {
		s--
	}
	return s
}

func runEnd(b string, e int, c uint8) int {
	for e+4 <= len(b) {
		w := b[e : e+4]
		if min(byteClass[w[0]], byteClass[w[1]], byteClass[w[2]], byteClass[w[3]]) < c {
			break
		}
		e += 4
	}
	for e < len(b) && byteClass[b[e]] >= c {
		e++
	}
	return e
}

// scanRun checks every window of b[from:to] against the groups of class c.
func (mm *multi) scanRun(b string, from, to int, c uint8, hp *hashes, spans []span) []span {
	gs := mm.groups[mm.byClass[c][0]:mm.byClass[c][1]]
	for cs := from; cs+gs[0].n <= to; cs += scanChunk {
		ce := min(to, cs+scanChunk+mm.maxLen-1)
		h, o := hp.cover(b, cs, ce)
		bits := mm.bits
		for gi := range gs {
			g := &gs[gi]
			last := min(cs+scanChunk, ce-g.n+1) - cs
			if last <= 0 {
				break
			}
			pow, salt := g.pow, g.salt
			lo := h[o : o+last]
			hi := h[o+g.n : o+g.n+last]
			hi = hi[:len(lo)]
			for i := range lo {
				key := hi[i] - lo[i]*pow + salt
				idx := key >> (64 - filterBits)
				if bits[idx>>6&(filterWords-1)]&(1<<(idx&63)) != 0 {
					spans = mm.confirm(b, cs+i, g.n, key, spans)
				}
			}
		}
	}
	return spans
}

// confirm appends the patterns whose key is key and which are at b[at:]
// (n bytes).
func (mm *multi) confirm(b string, at, n int, key uint64, spans []span) []span {
	for _, pi := range mm.exact[key] {
		p := &mm.pats[pi]
		if len(p.s) == n && sameBytes(b[at:at+n], p.s) && p.edge.ok(b, at, at+n) {
			s := span{at, at + n}
			if p.edge != nil {
				// The characters that hold the value's first and last
				// bits are part of its encoding.
				s.from -= int(min(p.edge.leadBits, 1))
				s.to += int(min(p.edge.tailBits, 1))
			}
			spans = append(spans, s)
		}
	}
	return spans
}

// sameBytes compares a and b (of one length) in a time that depends only
// on their length.
func sameBytes(a, b string) bool {
	b = b[:len(a)]
	var d uint64
	i := 0
	for ; i+8 <= len(a); i += 8 {
		d |= word64(a[i:i+8]) ^ word64(b[i:i+8])
	}
	for ; i < len(a); i++ {
		d |= uint64(a[i] ^ b[i])
	}
	return d == 0
}

// word64 is the first 8 bytes of s as one number (one load).
func word64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// ok reports whether the characters around a fragment at b[from:to] hold
// the first and last bits of the value.
func (e *b64Edge) ok(b string, from, to int) bool {
	if e == nil {
		return true
	}
	if e.leadBits > 0 {
		if from == 0 {
			return false
		}
		v, ok := b64Value(e.alphabet, b[from-1], e.fold)
		if !ok || v&(1<<e.leadBits-1) != e.leadVal && (!e.fold || !foldedEdge(e.alphabet, b[from-1], true, e.leadBits, e.leadVal)) {
			return false
		}
	}
	if e.tailBits > 0 {
		if to >= len(b) {
			return false
		}
		v, ok := b64Value(e.alphabet, b[to], e.fold)
		if !ok || v>>(6-e.tailBits) != e.tailVal && (!e.fold || !foldedEdge(e.alphabet, b[to], false, e.tailBits, e.tailVal)) {
			return false
		}
	}
	return true
}

// b64Value is the 6-bit value of c in alphabet (with fold, of c or of its
// upper case).
func b64Value(alphabet string, c byte, fold bool) (byte, bool) {
	t := &stdValues
	if alphabet == urlAlphabet {
		t = &urlValues
	}
	if v := t[c]; v >= 0 {
		return byte(v), true
	}
	if fold && c >= 'a' && c <= 'z' {
		return b64Value(alphabet, c-'a'+'A', false)
	}
	return 0, false
}

// foldedEdge reports whether the upper case of a lower-case letter c holds
// the edge bits (low with lead, else high).
func foldedEdge(alphabet string, c byte, lead bool, bits, val byte) bool {
	if c < 'a' || c > 'z' {
		return false
	}
	v, ok := b64Value(alphabet, c-'a'+'A', false)
	if !ok {
		return false
	}
	if lead {
		return v&(1<<bits-1) == val
	}
	return v>>(6-bits) == val
}

// stdValues and urlValues are the 6-bit values of the bytes in the two
// base64 alphabets (-1: not in it).
var stdValues, urlValues = b64Values(stdAlphabet), b64Values(urlAlphabet)

func b64Values(alphabet string) (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < 64; i++ {
		t[alphabet[i]] = int8(i)
	}
	return t
}
