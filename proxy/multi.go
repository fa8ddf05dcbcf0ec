package proxy

import (
	"strings"
	"unsafe"
)

// multi finds many patterns in one pass: a Wu-Manber scan over wmBlock-byte
// blocks (hashed into a 16 Ki table) for the patterns of at least wmMin
// bytes, strings.Index for the few shorter ones.
type multi struct {
	short  []string
	long   []string
	m      int                // shortest long pattern (capped at 255)
	shift  []uint8            // by block hash; 0: a pattern may end here
	bucket map[uint32][]int32 // hash of a window's last block -> long patterns
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
	mm := &multi{bucket: map[uint32][]int32{}}
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
	for pi, p := range mm.long {
		for j := wmBlock - 1; j < m; j++ {
			h := blockHash(p, j)
			if s := uint8(m - 1 - j); s < mm.shift[h] {
				mm.shift[h] = s
			}
		}
		h := blockHash(p, m-1)
		mm.bucket[h] = append(mm.bucket[h], int32(pi))
	}
	return mm
}

// search appends the spans of every occurrence of every pattern in b.
func (mm *multi) search(b string, spans []span) []span {
	for _, s := range mm.short {
		spans = indexAll(b, s, spans)
	}
	if len(mm.long) == 0 {
		return spans
	}
	m, n := mm.m, len(b)
	shift := (*[1 << wmBits]uint8)(mm.shift)
	base := unsafe.Pointer(unsafe.StringData(b))
	for pos := m - 1; pos < n; {
		// An unaligned 4-byte load of b[pos-3:pos+1] (pos >= m-1 >= 3),
		// little-endian as blockHash reads it.
		v := *(*[4]byte)(unsafe.Add(base, pos-3))
		h := hash4(uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24)
		if s := shift[h&(1<<wmBits-1)]; s != 0 {
			pos += int(s)
			continue
		}
		start := pos - m + 1
		for _, pi := range mm.bucket[h] {
			p := mm.long[pi]
			if start+len(p) <= n && b[start:start+len(p)] == p {
				spans = append(spans, span{start, start + len(p)})
			}
		}
		pos++
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
