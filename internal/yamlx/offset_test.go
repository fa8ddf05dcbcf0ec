package yamlx

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestOffsetPosPointsAtTheCharacter: an offset inside a scalar's value is
// placed on the source character that produced it, whatever the scalar's
// style: folded lines, doubled quotes, more-indented lines of a block, CRLF
// line breaks. Where the value cannot be matched to the source (escapes),
// the position is the scalar's start, never a character of another line.
func TestOffsetPosPointsAtTheCharacter(t *testing.T) {
	for name, tc := range map[string]struct {
		src, needle, want string
	}{
		"plain one line":          {"k: .a | $no\n", "$no", "f.yaml:1:9"},
		"plain folded":            {"k: .a |\n  $no\n", "$no", "f.yaml:2:3"},
		"plain folded, CRLF":      {"k: .a |\r\n   $no\r\n", "$no", "f.yaml:2:4"},
		"plain with a blank line": {"k: .a |\n\n  $no\n", "$no", "f.yaml:3:3"},
		"plain trailing spaces":   {"k: .a |   \n  $no\n", "$no", "f.yaml:2:3"},
		"single doubled quote":    {"k: '\"it''s\" + $no'\n", "$no", "f.yaml:1:15"},
		"single folded":           {"k: '.a |\n    $no'\n", "$no", "f.yaml:2:5"},
		"double folded":           {"k: \".a |\n    $no\"\n", "$no", "f.yaml:2:5"},
		"double one line":         {"k: \"二教 $no\"\n", "$no", "f.yaml:1:8"},
		"double with escape":      {"k: \"\\t.a | $no\"\n", "$no", "f.yaml:1:4"},
		"literal":                 {"k: |\n  .a\n  | $no\n", "$no", "f.yaml:3:5"},
		"literal more indented":   {"k: |\n  .a\n      | $no\n", "$no", "f.yaml:3:9"},
		"literal CRLF":            {"k: |\r\n  .a\r\n  | $no\r\n", "$no", "f.yaml:3:5"},
		"literal trailing blanks": {"k: |\n  .a   \n  | $no\n", "$no", "f.yaml:3:5"},
		"literal blank lines":     {"k: |\n  .a\n\n\n  | $no\n", "$no", "f.yaml:5:5"},
		"folded":                  {"k: >\n  .a |\n  $no\n", "$no", "f.yaml:3:3"},
		"folded more indented":    {"k: >\n  .a |\n    $no\n", "$no", "f.yaml:3:5"},
		"flow mapping":            {"s: [{k: .a | $no, x: 1}]\n", "$no", "f.yaml:1:14"},
		"flow mapping folded":     {"s: [{k: .a |\n   $no, x: 1}]\n", "$no", "f.yaml:2:4"},
		"tab before value":        {"k:\t.a |\t$no\n", "$no", "f.yaml:1:9"},
	} {
		t.Run(name, func(t *testing.T) {
			d, l := parse(t, tc.src)
			require.False(t, l.HasErrors(), l.Error())
			n := findKey(d, "k")
			require.NotNil(t, n, "no key k")
			off := strings.Index(n.Value, tc.needle)
			require.GreaterOrEqual(t, off, 0, "%q holds no %q", n.Value, tc.needle)
			require.Equal(t, tc.want, d.OffsetPos(n, off).String(), "value %q", n.Value)
		})
	}
}

// findKey is the value of the first mapping key named key, at any depth.
func findKey(d *Doc, key string) *yaml.Node {
	var walk func(n *yaml.Node) *yaml.Node
	walk = func(n *yaml.Node) *yaml.Node {
		if n == nil {
			return nil
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					return n.Content[i+1]
				}
			}
		}
		for _, c := range n.Content {
			if v := walk(c); v != nil {
				return v
			}
		}
		return nil
	}
	return walk(d.Root)
}

// TestOffsetPosManyProblemsInOneScalar: positions of many offsets in one
// long scalar, in order, cost one walk of it (lint of a hostile file with
// thousands of problems in one line must end promptly).
func TestOffsetPosManyProblemsInOneScalar(t *testing.T) {
	src := "k: \"" + strings.Repeat("${ $no } ", 25000) + "\"\n"
	d, l := parse(t, src)
	require.False(t, l.HasErrors(), l.Error())
	n := findKey(d, "k")
	last := ""
	for off := 0; off < len(n.Value); off += len("${ $no } ") {
		last = d.OffsetPos(n, off+3).String()
	}
	require.Equal(t, "f.yaml:1:224999", last)
}

// TestTabPosition: a tab that starts a line is reported on its own line
// and column (the YAML reader names the line before it).
func TestTabPosition(t *testing.T) {
	for src, want := range map[string]string{
		"a: 1\nb: 2\n\tc: 3\n":               "f.yaml:3:1: YAML syntax error: found a tab character that violates indentation",
		"a: 1\nb:\n  - 1\n  \t- 2\n":         "f.yaml:4:3: ",
		"description: d\nsteps:\n\t# note\n": "f.yaml:3:1: ",
	} {
		_, l := parse(t, src)
		require.True(t, l.HasErrors(), src)
		require.True(t, strings.HasPrefix(l.Error(), want), "%q: %s", src, l.Error())
	}
}
