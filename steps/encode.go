package steps

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendJSON appends the JSON text of jq value v to dst exactly as
// gojq.Marshal writes it (the same rules, after gojq's encoder.go: NaN is
// null, infinities are ±math.MaxFloat64, \b and \f in strings, '<', '>',
// '&', U+2028 and U+2029 as they are, invalid UTF-8 as \ufffd, keys sorted
// by bytes). Marshal writes into a bytes.Buffer through an encoder and
// sorts each object's keys in a new slice; appending into one slice sized
// from the shape walk, with a small object's keys sorted on the stack, is
// one allocation where Marshal made three plus one per object.
// TestAppendJSONIsMarshal holds it to Marshal's text.
func appendJSON(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if v {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case int:
		return strconv.AppendInt(dst, int64(v), 10)
	case float64:
		return appendFloat(dst, v)
	case *big.Int:
		return v.Append(dst, 10)
	case json.Number:
		return append(dst, v.String()...)
	case string:
		return appendString(dst, v)
	case []any:
		dst = append(dst, '[')
		for i, x := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, x)
		}
		return append(dst, ']')
	case map[string]any:
		return appendObject(dst, v)
	default:
		panic(fmt.Sprintf("invalid type: %[1]T (%[1]v)", v))
	}
}

type keyVal struct {
	key string
	val any
}

// smallObject is the most keys an object may have for appendObject to
// sort them on the stack.
const smallObject = 8

func appendObject(dst []byte, m map[string]any) []byte {
	var buf [smallObject]keyVal
	var kvs []keyVal
	if len(m) <= len(buf) {
		kvs = buf[:0]
	} else {
		kvs = make([]keyVal, 0, len(m))
	}
	for k, v := range m {
		kvs = append(kvs, keyVal{k, v})
	}
	slices.SortFunc(kvs, func(x, y keyVal) int { return strings.Compare(x.key, y.key) })
	dst = append(dst, '{')
	for i, kv := range kvs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, kv.key)
		dst = append(dst, ':')
		dst = appendJSON(dst, kv.val)
	}
	return append(dst, '}')
}

// appendFloat is gojq's encodeFloat64 (after encoding/json's floatEncoder).
func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) {
		return append(dst, "null"...)
	}
	f = min(max(f, -math.MaxFloat64), math.MaxFloat64)
	format := byte('f')
	if x := math.Abs(f); x != 0 && x < 1e-6 || x >= 1e21 {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(dst) - start; n >= 4 && dst[len(dst)-4] == 'e' && dst[len(dst)-3] == '-' && dst[len(dst)-2] == '0' {
			dst[len(dst)-2] = dst[len(dst)-1]
			dst = dst[:len(dst)-1]
		}
	}
	return dst
}

// appendString is gojq's encodeString.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if ' ' <= b && b <= '~' && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"':
				dst = append(dst, `\"`...)
			case '\\':
				dst = append(dst, `\\`...)
			case '\b':
				dst = append(dst, `\b`...)
			case '\f':
				dst = append(dst, `\f`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			case '\t':
				dst = append(dst, `\t`...)
			default:
				const hex = "0123456789abcdef"
				dst = append(dst, `\u00`...)
				dst = append(dst, hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
