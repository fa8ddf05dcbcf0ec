package fetch

import (
	"bytes"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// objLimit gives the largest inflated size allowed for an object of type t
// (delta targets use plumbing.AnyObject) and the total.
type objLimit struct {
	max   func(t plumbing.ObjectType) int64
	total int64
	count uint32
}

func objectLimitAny(lim Limits) objLimit {
	return objLimit{max: func(plumbing.ObjectType) int64 { return 4 * lim.MaxWireBytes }, total: 4 * lim.MaxWireBytes, count: 1 << 20}
}

func objectLimitTrees(lim Limits) objLimit {
	return objLimit{max: func(t plumbing.ObjectType) int64 {
		if t == plumbing.BlobObject {
			return 0 // a filtered fetch sends no blob
		}
		return lim.MaxTreeBytes
	}, total: 4 * lim.MaxWireBytes, count: 1 << 20}
}

func objectLimitBlobs(lim Limits, n int) objLimit {
	return objLimit{max: func(t plumbing.ObjectType) int64 {
		if t == plumbing.BlobObject || t == plumbing.AnyObject {
			return lim.MaxFileBytes
		}
		return 0
	}, total: lim.MaxTotalBytes, count: uint32(n)}
}

// checkPack reads a pack's object headers (and delta headers) and refuses it
// when an object would inflate beyond its limit, before anything is stored.
func checkPack(data []byte, ol objLimit) error {
	sc := packfile.NewScanner(bytes.NewReader(data))
	_, n, err := sc.Header()
	if err != nil {
		return fmt.Errorf("reading the pack: %w", err)
	}
	if n > ol.count {
		return limitErr("the pack holds %d objects, more than %d", n, ol.count)
	}
	var total int64
	for i := uint32(0); i < n; i++ {
		h, err := sc.NextObjectHeader()
		if err != nil {
			return fmt.Errorf("reading the pack: %w", err)
		}
		typ, size := h.Type, h.Length
		if typ.IsDelta() {
			// The delta itself, then the size of what it builds.
			if size > ol.max(plumbing.AnyObject)+64 {
				return limitErr("a delta of %d bytes is larger than allowed", size)
			}
			var d bytes.Buffer
			if _, _, err := sc.NextObject(&d); err != nil {
				return fmt.Errorf("reading the pack: %w", err)
			}
			typ, size = plumbing.AnyObject, deltaTargetSize(d.Bytes())
		}
		if max := ol.max(typ); size > max {
			if typ == plumbing.BlobObject || typ == plumbing.AnyObject {
				return limitErr("a file of %d bytes is larger than the %d allowed", size, max)
			}
			return limitErr("a git %s object of %d bytes is larger than the %d allowed", typ, size, max)
		}
		total += size
		if total > ol.total {
			return limitErr("the objects inflate to more than %d bytes", ol.total)
		}
	}
	return nil
}

// deltaTargetSize reads the result size from a git delta's header (two
// little-endian base-128 numbers: source size, target size).
func deltaTargetSize(d []byte) int64 {
	i := 0
	next := func() int64 {
		var v int64
		var shift uint
		for i < len(d) && shift < 63 {
			b := d[i]
			i++
			v |= int64(b&0x7f) << shift
			shift += 7
			if b&0x80 == 0 {
				return v
			}
		}
		return 1 << 62
	}
	next()
	return next()
}
