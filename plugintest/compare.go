package plugintest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"golang.org/x/text/encoding/htmlindex"
)

// marshal renders a value as compact JSON without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// normalize makes a value comparable with a decoded JSON result: a JSON
// round trip (numbers become float64).
func normalize(v any) any {
	b, err := marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// pretty renders a value as indented JSON with sorted keys.
func pretty(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimRight(b.String(), "\n")
}

// equal compares two normalized values.
func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

// maxDiffLines bounds the lines diffLines compares (beyond it, both texts
// are shown whole).
const maxDiffLines = 2000

// diffLines renders a line diff of want and got: "- " lines only in want,
// "+ " lines only in got, "  " common lines (runs of more than three common
// lines are shortened).
func diffLines(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		return "expected:\n" + indent(want, "  ") + "\ngot:\n" + indent(got, "  ")
	}
	// Longest common subsequence table, from the ends.
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var out []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, line{' ', a[i]})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, line{'-', a[i]})
			i++
		default:
			out = append(out, line{'+', b[j]})
			j++
		}
	}
	var sb strings.Builder
	sb.WriteString("- expected\n+ got\n")
	for k := 0; k < len(out); k++ {
		l := out[k]
		if l.op == ' ' {
			// Shorten long runs of common lines, keeping one of context on each side.
			e := k
			for e < len(out) && out[e].op == ' ' {
				e++
			}
			if e-k > 3 {
				if k > 0 {
					sb.WriteString("  " + out[k].text + "\n")
				}
				sb.WriteString("  ...\n")
				if e < len(out) {
					sb.WriteString("  " + out[e-1].text + "\n")
				}
				k = e - 1
				continue
			}
		}
		sb.WriteByte(l.op)
		sb.WriteByte(' ')
		sb.WriteString(l.text)
		sb.WriteByte('\n')
	}
	return strings.TrimRight(sb.String(), "\n")
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// encodeCharset encodes UTF-8 text in a legacy charset (gbk, gb18030,
// big5, ...), as an old campus page is sent.
func encodeCharset(b []byte, charset string) ([]byte, error) {
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return nil, fmt.Errorf("unknown charset")
	}
	out, err := enc.NewEncoder().Bytes(b)
	if err != nil {
		return nil, fmt.Errorf("the body cannot be encoded in it: %v", err)
	}
	return out, nil
}
