package yamlx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
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

// DefaultLimits are those of a tool file (a front matter has tighter ones).
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

	startsOnce sync.Once
	starts     []int // byte offset of each line

	walkMu sync.Mutex
	walk   *scalarWalk // the last walk of a scalar, to resume
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

// OffsetPos maps a byte offset inside a scalar's value to a file position:
// the source character that produced the value's byte. The value is walked
// beside its source (folded line breaks, doubled quotes, a block's
// indentation, CRLF line breaks); where the two cannot be matched (an escape
// sequence), the position is the scalar's start.
func (d *Doc) OffsetPos(n *yaml.Node, off int) diag.Pos {
	if off > len(n.Value) {
		off = len(n.Value)
	}
	if off < 0 {
		off = 0
	}
	if line, col, ok := d.walkScalar(n, off); ok {
		return d.Pos(line, col)
	}
	return d.Pos(n.Line, n.Column)
}

// scalarWalk is where a walk of a scalar's value beside its source stands:
// byte i of the value is at byte at (column col) of source line line.
type scalarWalk struct {
	n                    *yaml.Node
	i, line, at, col     int
	text                 string // the source line, without its line break
	end                  int    // text's length without trailing blanks
	indent               int    // a block scalar's indentation
	block, literal       bool
	single, double, done bool
}

// walkScalar finds the source line and column (in characters) of byte off
// of scalar n's value. Each step costs O(1), and a walk resumes where the
// last one of the same scalar stopped when off is not before it, so the
// positions of many problems in one long scalar cost one pass.
func (d *Doc) walkScalar(n *yaml.Node, off int) (line, col int, ok bool) {
	d.walkMu.Lock()
	defer d.walkMu.Unlock()
	w := d.walk
	if w == nil || w.n != n || w.i > off {
		w = d.startWalk(n)
		d.walk = w
	}
	if w == nil {
		return 0, 0, false
	}
	if w.done {
		return w.line, w.col, off == w.i
	}
	v, last := n.Value, d.lineCount()
	for w.i < off {
		if w.at >= w.end {
			// A line break: count the blank lines after it.
			k := 0
			for w.line+1+k <= last && strings.TrimLeft(d.lineText(w.line+1+k), " \t\r") == "" {
				k++
			}
			if w.line+1+k > last {
				d.walk = nil
				return 0, 0, false
			}
			var seps []string
			switch {
			case w.literal:
				seps = []string{strings.Repeat("\n", k+1)}
			case w.block:
				seps = []string{strings.Repeat("\n", k+1), strings.Repeat("\n", k), " "}
			case k > 0:
				seps = []string{strings.Repeat("\n", k)}
			default:
				seps = []string{" "}
			}
			matched := false
			for _, sep := range seps {
				if sep != "" && strings.HasPrefix(v[w.i:], sep) {
					w.i += len(sep)
					matched = true
					break
				}
			}
			if !matched {
				d.walk = nil
				return 0, 0, false
			}
			w.setLine(d, w.line+1+k)
			if !w.block {
				for w.at < len(w.text) && (w.text[w.at] == ' ' || w.text[w.at] == '\t') {
					w.at++
				}
				w.col = w.at + 1
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(v[w.i:])
		c, csize := utf8.DecodeRuneInString(w.text[w.at:])
		switch {
		case w.double && c == '\\':
			d.walk = nil
			return 0, 0, false
		case w.single && c == '\'' && r == '\'' && strings.HasPrefix(w.text[w.at:], "''"):
			w.at += 2
			w.col += 2
		case c == r:
			w.at += csize
			w.col++
		default:
			d.walk = nil
			return 0, 0, false
		}
		w.i += size
	}
	return w.line, w.col, true
}

// setLine moves the walk to the start of source line ln (past a block
// scalar's indentation).
func (w *scalarWalk) setLine(d *Doc, ln int) {
	w.line = ln
	w.text = strings.TrimSuffix(d.lineText(ln), "\r")
	w.end = len(strings.TrimRight(w.text, " \t"))
	if w.literal {
		// A literal block keeps a line's trailing blanks.
		w.end = len(w.text)
	}
	w.at, w.col = 0, 1
	if w.block {
		w.at = min(w.indent, len(w.text))
		w.col = w.at + 1
	}
}

// startWalk places a walk at the first character of scalar n's value; nil
// when the value's start cannot be found.
func (d *Doc) startWalk(n *yaml.Node) *scalarWalk {
	w := &scalarWalk{n: n,
		block:   n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0,
		literal: n.Style&yaml.LiteralStyle != 0,
		single:  n.Style&yaml.SingleQuotedStyle != 0,
		double:  n.Style&yaml.DoubleQuotedStyle != 0,
	}
	line, col := d.ContentPos(n)
	if w.block {
		if line == n.Line {
			// An empty block on the text's last line.
			w.line, w.col, w.done = n.Line, n.Column, true
			return w
		}
		// The block's indentation: that of its first line holding text.
		w.indent = -1
		for ln := line; ln <= d.lineCount(); ln++ {
			if strings.TrimRight(d.lineText(ln), " \r") != "" {
				w.indent = d.indentOf(ln)
				break
			}
		}
		if w.indent < 0 {
			w.line, w.col, w.done = line, 1, true
			return w
		}
		w.setLine(d, line)
		return w
	}
	w.setLine(d, line)
	// col counts characters: find its byte offset.
	for c := 1; c < col; c++ {
		if w.at >= len(w.text) {
			return nil
		}
		_, size := utf8.DecodeRuneInString(w.text[w.at:])
		w.at += size
	}
	w.col = col
	return w
}

func (d *Doc) lineText(line int) string {
	starts := d.lineStarts()
	if line < 1 || line > len(starts) {
		return ""
	}
	src := d.Src[starts[line-1]:]
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return string(src)
}

// lineStarts are the byte offsets of the text's lines, computed once.
func (d *Doc) lineStarts() []int {
	d.startsOnce.Do(func() {
		d.starts = []int{0}
		for i, b := range d.Src {
			if b == '\n' {
				d.starts = append(d.starts, i+1)
			}
		}
	})
	return d.starts
}

// lineCount is the number of lines of the text (a last line without a
// line break counts).
func (d *Doc) lineCount() int {
	n := len(d.lineStarts()) - 1 // the line breaks
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
		col := 1
		if strings.Contains(msg, "tab character") {
			line, col = d.tabAt(line)
		} else {
			line, col = d.problemAt(line, msg)
		}
		l.Errorf(d.Pos(line, col), "%s", msg)
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

// tabAt finds the tab the YAML reader refused: the parser names the line
// before it, so it is the first tab in the leading blanks of a line from
// there on.
func (d *Doc) tabAt(line int) (int, int) {
	for ln := max(line, 1); ln <= d.lineCount(); ln++ {
		t := d.lineText(ln)
		lead := len(t) - len(strings.TrimLeft(t, " \t"))
		if i := strings.IndexByte(t[:lead], '\t'); i >= 0 {
			return ln, i + 1
		}
	}
	return line, 1
}

// problemAt finds the line the YAML reader stumbled on. For a parser error
// ("did not find expected key", "did not find expected '-' indicator") it
// names the line where the enclosing block starts, often many lines above a
// one-space slip; the slip is on the last line of the shortest run of whole
// lines from the top that fails with the same message. The run is found by
// bisection (a few parses, only for a text that fails); the column is the
// line's first character. When no such line stands out, the reported line
// is kept.
func (d *Doc) problemAt(reported int, msg string) (int, int) {
	n := d.lineCount()
	fails := func(k int) bool {
		end := len(d.Src)
		if starts := d.lineStarts(); k < len(starts) {
			end = starts[k]
		}
		var node yaml.Node
		err := yaml.Unmarshal(d.Src[:end], &node)
		if err == nil {
			return false
		}
		_, m := syntaxError(err)
		return m == msg
	}
	lo, hi := max(reported, 1), n // the first run that fails lies in [lo, hi]
	if lo > hi || !fails(hi) {
		return reported, 1
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo > 1 && fails(lo-1) {
		return reported, 1 // not a clean edge: keep what the reader said
	}
	t := d.lineText(lo)
	return lo, len(t) - len(strings.TrimLeft(t, " ")) + 1
}

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
