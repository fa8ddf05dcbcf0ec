package yamlx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pkuinfo/harness/internal/diag"
	"go.yaml.in/yaml/v3"
)

// Limits bound what one YAML text may hold.
type Limits struct {
	MaxBytes int // the text's size
	MaxKeys  int // mapping keys and sequence items in all
	MaxDepth int // nesting of mappings and sequences
}

// DefaultLimits are those of a front matter or a tool file.
var DefaultLimits = Limits{MaxBytes: 256 << 10, MaxKeys: 20000, MaxDepth: 24}

// LineMap places the lines of a YAML text inside its file: line i of the text
// (1-based) is file line Lines[i-1].Line, and its columns shift by
// Lines[i-1].Col (runes removed before the text, e.g. a list indent).
type LineMap struct {
	Line int
	Col  int
}

// Doc is one YAML text and where it sits in its file.
type Doc struct {
	File  string
	Src   []byte
	Root  *yaml.Node // the document's content node (nil for an empty text)
	first int        // file line of text line 1 (when lines is nil)
	lines []LineMap  // explicit map, for fenced blocks
}

// Pos converts a text position to a file position.
func (d *Doc) Pos(line, col int) diag.Pos {
	if line < 1 {
		line = 1
	}
	if col < 1 {
		col = 1
	}
	if d.lines != nil {
		if line > len(d.lines) {
			line = len(d.lines)
		}
		if line >= 1 {
			m := d.lines[line-1]
			return diag.Pos{File: d.File, Line: m.Line, Col: col + m.Col}
		}
	}
	// yaml.v3 may place a node (an empty document's null) one line past a
	// text without a final line break: keep positions inside the text.
	if n := d.lineCount(); n > 0 && line > n {
		line = n
	}
	return diag.Pos{File: d.File, Line: d.first + line - 1, Col: col}
}

// NodePos is the file position of a node.
func (d *Doc) NodePos(n *yaml.Node) diag.Pos {
	if n == nil {
		return d.Pos(1, 1)
	}
	return d.Pos(n.Line, n.Column)
}

// ContentPos is where a scalar's content starts: one past an opening quote,
// the next line of a block scalar.
func (d *Doc) ContentPos(n *yaml.Node) (line, col int) {
	switch {
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		return n.Line, n.Column + 1
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		// Content starts on the next line at the block's indentation; an
		// empty block on the text's last line has no such line.
		ln := n.Line + 1
		if ln > d.lineCount() {
			return n.Line, n.Column
		}
		return ln, d.indentOf(ln) + 1
	}
	return n.Line, n.Column
}

// OffsetPos maps a byte offset inside a scalar's value to a file position.
// Exact for plain, single-line quoted and literal block scalars; others (with
// escapes or folding) clamp to the scalar's start.
func (d *Doc) OffsetPos(n *yaml.Node, off int) diag.Pos {
	line, col := d.ContentPos(n)
	v := n.Value
	if off > len(v) {
		off = len(v)
	}
	if off < 0 {
		off = 0
	}
	exact := n.Style&yaml.LiteralStyle != 0 ||
		(n.Style&(yaml.FoldedStyle|yaml.DoubleQuotedStyle) == 0 && !strings.Contains(v, "\n")) ||
		(n.Style&yaml.DoubleQuotedStyle != 0 && !strings.ContainsAny(v, "\n\\\"") && !strings.Contains(d.lineText(n.Line), "\\"))
	if !exact {
		return d.Pos(n.Line, n.Column)
	}
	prefix := v[:off]
	if i := strings.LastIndexByte(prefix, '\n'); i >= 0 {
		nl := strings.Count(prefix, "\n")
		return d.Pos(line+nl, d.indentOf(line+nl)+1+utf8.RuneCountInString(prefix[i+1:]))
	}
	return d.Pos(line, col+utf8.RuneCountInString(prefix))
}

func (d *Doc) lineText(line int) string {
	src := d.Src
	for i := 1; i < line; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return string(src)
}

// lineCount is the number of lines of the text (a last line without a
// line break counts).
func (d *Doc) lineCount() int {
	n := bytes.Count(d.Src, []byte("\n"))
	if len(d.Src) > 0 && d.Src[len(d.Src)-1] != '\n' {
		n++
	}
	return n
}

func (d *Doc) indentOf(line int) int {
	t := d.lineText(line)
	return len(t) - len(strings.TrimLeft(t, " "))
}

// Parse parses one YAML text strictly. first is the file line of the text's
// first line; lines, when not nil, maps each text line instead.
func Parse(file string, src []byte, first int, lines []LineMap, lim Limits, l *diag.List) *Doc {
	d := &Doc{File: file, Src: src, first: first, lines: lines}
	if lim.MaxBytes > 0 && len(src) > lim.MaxBytes {
		l.Errorf(d.Pos(1, 1), "the YAML is %d bytes, more than the limit of %d", len(src), lim.MaxBytes)
		return d
	}
	if !utf8.Valid(src) {
		l.Errorf(d.Pos(1, 1), "the YAML is not valid UTF-8")
		return d
	}
	if i := bytes.IndexByte(src, 0); i >= 0 {
		l.Errorf(d.Pos(1, 1), "the YAML holds a NUL byte")
		return d
	}
	// Bound the key count before parsing: every key or item needs a ':', a
	// '-' or a ',' (flow), so their count bounds the work of any later check.
	if lim.MaxKeys > 0 {
		n := bytes.Count(src, []byte(":")) + bytes.Count(src, []byte("-")) + bytes.Count(src, []byte(","))
		if n > lim.MaxKeys*4 {
			l.Errorf(d.Pos(1, 1), "the YAML holds too many keys and items (more than %d)", lim.MaxKeys)
			return d
		}
	}
	if lim.MaxDepth > 0 {
		if line, ok := flowTooDeep(src, lim.MaxDepth); !ok {
			l.Errorf(d.Pos(line, 1), "the YAML nests deeper than %d levels", lim.MaxDepth)
			return d
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return d // empty text
		}
		line, msg := syntaxError(err)
		l.Errorf(d.Pos(line, 1), "%s", msg)
		return d
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil {
		l.Errorf(d.Pos(second.Line, 1), "a second YAML document is not allowed (remove the '---' separator)")
		return d
	} else if !errors.Is(err, io.EOF) {
		line, msg := syntaxError(err)
		l.Errorf(d.Pos(line, 1), "%s", msg)
		return d
	}
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		d.Root = root.Content[0]
	}
	if d.Root != nil {
		keys, unsafe := 0, false
		d.check(d.Root, 1, lim, &keys, &unsafe, l)
		if unsafe {
			// Only a tree without aliases, anchors, tags or excess is walked.
			d.Root = nil
		}
	}
	return d
}

// flowTooDeep finds bracket nesting over max outside quotes (a cheap pre-scan:
// yaml.v3 recurses per level).
func flowTooDeep(src []byte, max int) (int, bool) {
	depth, line := 0, 1
	var quote byte
	for _, c := range src {
		switch {
		case c == '\n':
			line++
			if quote == '"' || quote == '\'' {
				continue
			}
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			depth++
			if depth > max {
				return line, false
			}
		case c == ']' || c == '}':
			if depth > 0 {
				depth--
			}
		case c == '#':
			// comments may hold anything; quotes inside them are rare enough
		}
	}
	return 0, true
}

var lineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxError(err error) (int, string) {
	msg := err.Error()
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, "YAML syntax error: " + m[2]
	}
	return 1, "YAML syntax error: " + strings.TrimPrefix(msg, "yaml: ")
}

// check walks the tree once and refuses every construct outside the safe
// subset; the structural ones set unsafe, so the tree is never walked.
func (d *Doc) check(n *yaml.Node, depth int, lim Limits, keys *int, unsafe *bool, l *diag.List) {
	pos := d.NodePos(n)
	if lim.MaxDepth > 0 && depth > lim.MaxDepth {
		l.Errorf(pos, "nesting deeper than %d levels", lim.MaxDepth)
		*unsafe = true
		return
	}
	if n.Kind == yaml.AliasNode {
		l.Errorf(pos, "aliases (*%s) are not allowed: write the value out", n.Value)
		*unsafe = true
		return
	}
	if n.Anchor != "" {
		l.Errorf(pos, "anchors (&%s) are not allowed", n.Anchor)
		*unsafe = true
		return
	}
	if n.Style&yaml.TaggedStyle != 0 {
		l.Errorf(pos, "explicit tags (%s) are not allowed", n.Tag)
		*unsafe = true
		return
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!binary" {
			l.Errorf(pos, "binary values are not allowed")
			*unsafe = true
		}
	case yaml.SequenceNode:
		*keys += len(n.Content)
		if lim.MaxKeys > 0 && *keys > lim.MaxKeys {
			l.Errorf(pos, "more than %d keys and items", lim.MaxKeys)
			*unsafe = true
			return
		}
		for _, c := range n.Content {
			d.check(c, depth+1, lim, keys, unsafe, l)
		}
	case yaml.MappingNode:
		*keys += len(n.Content) / 2
		if lim.MaxKeys > 0 && *keys > lim.MaxKeys {
			l.Errorf(pos, "more than %d keys and items", lim.MaxKeys)
			*unsafe = true
			return
		}
		seen := make(map[string]*yaml.Node, len(n.Content)/2)
		folded := make(map[string]*yaml.Node, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			kp := d.NodePos(k)
			if k.Kind == yaml.AliasNode || k.Anchor != "" || k.Style&yaml.TaggedStyle != 0 {
				d.check(k, depth+1, lim, keys, unsafe, l)
				continue
			}
			if k.Kind != yaml.ScalarNode {
				l.Errorf(kp, "a mapping key must be a plain string")
				*unsafe = true
				continue
			}
			if k.Tag == "!!merge" || k.Value == "<<" {
				l.Errorf(kp, "merge keys (<<) are not allowed")
				*unsafe = true
				continue
			}
			if !isASCIIPrintable(k.Value) {
				l.Errorf(kp, "key %q has characters outside printable ASCII", k.Value)
			}
			if prev, ok := seen[k.Value]; ok {
				l.Errorf(kp, "duplicate key %q (first at line %d)", k.Value, d.NodePos(prev).Line)
			} else if prev, ok := folded[strings.ToLower(k.Value)]; ok {
				l.Errorf(kp, "key %q differs only in case from %q (line %d)", k.Value, prev.Value, d.NodePos(prev).Line)
			}
			seen[k.Value] = k
			folded[strings.ToLower(k.Value)] = k
			d.check(v, depth+1, lim, keys, unsafe, l)
		}
	}
}

func isASCIIPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Safe reports whether the tree passed the structural checks (no aliases,
// anchors or tags) and may be walked and decoded.
func (d *Doc) Safe() bool { return d.Root != nil }

// Describe names a node's kind for messages.
func Describe(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return "a string"
	}
	return "a YAML " + fmt.Sprint(n.Kind)
}
