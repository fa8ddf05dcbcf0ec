package plugintest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

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
// round trip that keeps each number's text (json.Number), so that a large
// integer is compared digit for digit and never rounded to a float.
func normalize(v any) any {
	b, err := marshal(v)
	if err != nil {
		return v
	}
	out, err := decodeJSON(b)
	if err != nil {
		return v
	}
	return out
}

// decodeJSON decodes one JSON value, numbers as json.Number.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return out, nil
}

// maxExactDigits bounds the integers compared digit for digit (as the
// engine keeps integers exact up to 1,000 digits).
const maxExactDigits = 1000

// exactNumbers replaces in v, read from node n, each integer too large for
// an int64 (which the YAML reader gives as a float) by its exact value,
// and returns v.
func exactNumbers(n *yaml.Node, v any) any {
	switch n.Kind {
	case yaml.ScalarNode:
		// The YAML reader tags an integer beyond 64 bits !!float.
		if _, isFloat := v.(float64); isFloat && (n.Tag == "!!int" || n.Tag == "!!float") {
			text := strings.TrimPrefix(strings.ReplaceAll(n.Value, "_", ""), "+")
			if isInteger(json.Number(text)) {
				if bi, ok := new(big.Int).SetString(text, 10); ok {
					return json.Number(bi.String())
				}
			}
		}
	case yaml.SequenceNode:
		if list, ok := v.([]any); ok && len(list) == len(n.Content) {
			for i, c := range n.Content {
				list[i] = exactNumbers(c, list[i])
			}
		}
	case yaml.MappingNode:
		if m, ok := v.(map[string]any); ok {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if x, ok := m[n.Content[i].Value]; ok {
					m[n.Content[i].Value] = exactNumbers(n.Content[i+1], x)
				}
			}
		}
	}
	return v
}

// pretty renders a value as indented JSON with sorted keys.
func pretty(v any) string {
	b, err := marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out bytes.Buffer
	json.Indent(&out, b, "", "  ")
	return out.String()
}

// equal compares two normalized values; numbers compare as numbers (23
// equals 23.0), integers exactly.
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		return ok && sameNumber(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// sameNumber compares two JSON numbers: two integers digit for digit,
// others by their float64 values.
func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	if isInteger(a) && isInteger(b) {
		x, okx := new(big.Int).SetString(string(a), 10)
		y, oky := new(big.Int).SetString(string(b), 10)
		return okx && oky && x.Cmp(y) == 0
	}
	x, errx := a.Float64()
	y, erry := b.Float64()
	return errx == nil && erry == nil && x == y
}

func isInteger(n json.Number) bool {
	s := strings.TrimPrefix(string(n), "-")
	if s == "" || len(s) > maxExactDigits {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

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
