package proxy

import (
	"strings"
	"unsafe"
)

// multi finds many patterns in one pass: a Wu-Manber scan over wmBlock-byte
// blocks (hashed into a 16 Ki table) for the patterns of at least wmMin
// bytes, strings.Index for the few shorter ones.
type multi struct {
	short []string
	long  []string
	m     int     // shortest long pattern (capped at 255)
	shift []uint8 // by block hash; 0: a pattern may end here
	// The long patterns whose first m bytes end in a block of hash h, in
	// an open-addressing table: bkeys[i] is h+1 (0: empty), bvals[i] the
	// patterns' indexes.
	bkeys []uint32
	bvals [][]int32
	bmask uint32
}

const (
	wmMin   = 8
	wmBlock = 4
	wmBits  = 14
)

// blockHash hashes the wmBlock bytes ending at b[j].
func blockHash(b string, j int) uint32 {
	v := uint32(b[j-3]) | uint32(b[j-2])<<8 | uint32(b[j-1])<<16 | uint32(b[j])<<24
	return hash4(v)
}

func hash4(v uint32) uint32 { return v * 2654435761 >> (32 - wmBits) }

func newMulti(pats []string) *multi {
	mm := &multi{}
	for _, p := range pats {
		if len(p) < wmMin {
			mm.short = append(mm.short, p)
			continue
		}
		mm.long = append(mm.long, p)
		if mm.m == 0 || len(p) < mm.m {
			mm.m = len(p)
		}
	}
	if len(mm.long) == 0 {
		return mm
	}
	m := min(mm.m, 255)
	mm.m = m
	mm.shift = make([]uint8, 1<<wmBits)
	for i := range mm.shift {
		mm.shift[i] = uint8(m - wmBlock + 1)
	}
	bucket := map[uint32][]int32{}
	for pi, p := range mm.long {
		for j := wmBlock - 1; j < m; j++ {
			h := blockHash(p, j)
			if s := uint8(m - 1 - j); s < mm.shift[h] {
				mm.shift[h] = s
			}
		}
		h := blockHash(p, m-1)
		bucket[h] = append(bucket[h], int32(pi))
	}
	size := 8
	for size < 2*len(bucket) {
		size *= 2
	}
	mm.bkeys, mm.bvals, mm.bmask = make([]uint32, size), make([][]int32, size), uint32(size-1)
	for h, v := range bucket {
		i := h & mm.bmask
		for mm.bkeys[i] != 0 {
			i = (i + 1) & mm.bmask
		}
		mm.bkeys[i], mm.bvals[i] = h+1, v
	}
	return mm
}

// candidates returns the long patterns whose first m bytes end in a block
// of hash h.
func (mm *multi) candidates(h uint32) []int32 {
	for i := h & mm.bmask; ; i = (i + 1) & mm.bmask {
		switch mm.bkeys[i] {
		case h + 1:
			return mm.bvals[i]
		case 0:
			return nil
		}
	}
}

// search appends the spans of every occurrence of every pattern in b
// (in no particular order).
func (mm *multi) search(b string, spans []span) []span {
	for _, s := range mm.short {
		spans = indexAll(b, s, spans)
	}
	if len(mm.long) == 0 || len(b) < mm.m {
		return spans
	}
	// A window is named by the offset of its last byte, pos. The pos range
	// is split in two halves scanned in step: each step of a scan waits on
	// its previous one (load, hash, table, shift), so two independent scans
	// keep the processor busy. A match is found at the window where it
	// starts, whichever half that window is in; verification reads on
	// past the half freely.
	m, n := mm.m, len(b)
	shift := (*[1 << wmBits]uint8)(mm.shift)
	base := unsafe.Pointer(unsafe.StringData(b))
	// hashAt hashes b[pos-3:pos+1], an unaligned 4-byte load
	// (pos >= m-1 >= 3), little-endian as blockHash reads it.
	hashAt := func(pos int) uint32 {
		v := *(*[4]byte)(unsafe.Add(base, pos-3))
		return hash4(uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24)
	}
	p1, p2 := m-1, m-1+(n-m+1)/2
	end1 := p2
	if n-m+1 < 2*wmTwoScans {
		p2, end1 = n, n
	}
	for p1 < end1 && p2 < n {
		h1, h2 := hashAt(p1), hashAt(p2)
		s1, s2 := shift[h1&(1<<wmBits-1)], shift[h2&(1<<wmBits-1)]
		if s1 == 0 {
			spans = mm.verify(b, p1-m+1, h1, spans)
			s1 = 1
		}
		if s2 == 0 {
			spans = mm.verify(b, p2-m+1, h2, spans)
			s2 = 1
		}
		p1 += int(s1)
		p2 += int(s2)
	}
	for p1 < end1 {
		h := hashAt(p1)
		s := shift[h&(1<<wmBits-1)]
		if s == 0 {
			spans = mm.verify(b, p1-m+1, h, spans)
			s = 1
		}
		p1 += int(s)
	}
	for p2 < n {
		h := hashAt(p2)
		s := shift[h&(1<<wmBits-1)]
		if s == 0 {
			spans = mm.verify(b, p2-m+1, h, spans)
			s = 1
		}
		p2 += int(s)
	}
	return spans
}

// wmTwoScans is the length of the pos range, per half, from which search
// scans two halves at once.
const wmTwoScans = 64

// verify appends the long patterns of bucket h that occur at start.
func (mm *multi) verify(b string, start int, h uint32, spans []span) []span {
	for _, pi := range mm.candidates(h) {
		p := mm.long[pi]
		if start+len(p) <= len(b) && b[start:start+len(p)] == p {
			spans = append(spans, span{start, start + len(p)})
		}
	}
	return spans
}

// indexAll appends the spans of every occurrence of s in b.
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
