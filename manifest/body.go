package manifest

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// MaxInstructionsBytes bounds the agent's instructions.
const MaxInstructionsBytes = 64 << 10

// MaxMarkdownNesting bounds the block quotes and list items one line of the
// body opens: the Markdown parser's work grows with the square of that
// nesting (a 1 MiB line of "> > > …" takes minutes), so it is checked with a
// linear scan first.
const MaxMarkdownNesting = 32

// md finds the body's blocks. It parses block structure only: no inline
// parser and no paragraph transformer runs, as the blocks need neither, and
// the inline link and reference parsers take time that grows with the
// square of some inputs (a megabyte of "[a](" took minutes).
var md = parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...))

// A fenced block in the body whose info string is "yaml tool NAME",
// "json widget NAME" or "yaml test NAME" is a tool, widget or test case;
// every other block stays part of the instructions.
var blockKinds = map[string]string{"tool": "yaml", "widget": "json", "test": "yaml"}

// parseBody splits the Markdown body into the agent's instructions and the
// fenced tool, widget and test blocks.
func parseBody(p *Plugin, body []byte, bodyLine int, l *diag.List) []*Block {
	// Line starts, to turn byte offsets into file lines and columns.
	starts := []int{0}
	for i, c := range body {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	lineOf := func(off int) int { // 0-based line index in body
		lo, hi := 0, len(starts)-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if starts[mid] <= off {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return lo
	}
	posOf := func(off int) diag.Pos {
		li := lineOf(off)
		return diag.Pos{File: "PLUGIN.md", Line: bodyLine + li, Col: utf8.RuneCount(body[starts[li]:off]) + 1}
	}
	if line, ok := nestingOK(body, MaxMarkdownNesting); !ok {
		l.Errorf(diag.Pos{File: "PLUGIN.md", Line: bodyLine + line, Col: 1},
			"the line nests block quotes or list items more than %d levels deep", MaxMarkdownNesting)
		return nil
	}
	doc := md.Parse(text.NewReader(body))
	var blocks []*Block
	type cut struct{ from, to int }
	var cuts []cut
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		fc, ok := n.(*ast.FencedCodeBlock)
		if !ok || fc.Info == nil {
			return ast.WalkContinue, nil
		}
		info := strings.Fields(string(fc.Info.Segment.Value(body)))
		if len(info) < 2 {
			return ast.WalkContinue, nil
		}
		infoPos := posOf(fc.Info.Segment.Start)
		infoPos.Col = 1
		lang, ok := blockKinds[info[1]]
		if !ok {
			// "yaml tests x", "yaml Tool x": a block meant as a test or a
			// tool that would silently stay instructions.
			lg := strings.ToLower(info[0])
			kind := strings.TrimSuffix(strings.ToLower(info[1]), "s")
			if want, near := blockKinds[kind]; near && (lg == "yaml" || lg == "yml" || lg == "json") {
				l.Errorf(infoPos, "a %q block is not read: a %s block's info string is \"%s %s NAME\"", strings.Join(info, " "), kind, want, kind)
				return ast.WalkSkipChildren, nil
			}
			return ast.WalkContinue, nil
		}
		lg := strings.ToLower(info[0])
		if lg == "yml" {
			lg = "yaml"
		}
		if lg != lang || len(info) != 3 {
			l.Errorf(infoPos, "a %s block's info string is \"%s %s NAME\"", info[1], lang, info[1])
			return ast.WalkSkipChildren, nil
		}
		var buf bytes.Buffer
		var lines []yamlx.LineMap
		segs := fc.Lines()
		for i := 0; i < segs.Len(); i++ {
			s := segs.At(i)
			li := lineOf(s.Start)
			col := utf8.RuneCount(body[starts[li]:s.Start])
			buf.Write(s.Value(body))
			lines = append(lines, yamlx.LineMap{Line: bodyLine + li, Col: col})
		}
		// The block runs from its opening fence line to its closing fence:
		// the line right after its last content line (or after the info
		// line), when that line is a fence; an unclosed block ends with its
		// content. (A segment's Stop is one past its line break.)
		from := starts[lineOf(fc.Info.Segment.Start)]
		last := fc.Info.Segment.Stop
		if segs.Len() > 0 {
			last = segs.At(segs.Len()-1).Stop - 1
		}
		lineEnd := func(j int) int {
			if j+1 < len(starts) {
				return starts[j+1]
			}
			return len(body)
		}
		li := lineOf(max(last, 0))
		to := lineEnd(li)
		if j := li + 1; j < len(starts) {
			t := strings.TrimLeft(string(body[starts[j]:lineEnd(j)]), " \t>")
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				to = lineEnd(j)
			}
		}
		cuts = append(cuts, cut{from, to})
		b := &Block{Kind: info[1], Name: info[2], Text: buf.Bytes(), Pos: infoPos}
		if lang == "yaml" {
			lim := yamlx.Limits{MaxBytes: MaxToolBytes, MaxKeys: 20000, MaxDepth: 24}
			if b.Kind == "test" {
				lim = yamlx.Limits{MaxBytes: MaxFileBytes, MaxKeys: 50000, MaxDepth: 40}
			}
			if len(lines) == 0 {
				lines = []yamlx.LineMap{{Line: infoPos.Line + 1}}
			}
			b.Doc = yamlx.Parse("PLUGIN.md", b.Text, 0, lines, lim, l)
		}
		blocks = append(blocks, b)
		return ast.WalkSkipChildren, nil
	})
	var instr bytes.Buffer
	prev := 0
	for _, c := range cuts {
		if c.from < prev {
			continue
		}
		instr.Write(body[prev:c.from])
		prev = c.to
	}
	instr.Write(body[prev:])
	p.Instructions = strings.TrimSpace(instr.String())
	if len(p.Instructions) > MaxInstructionsBytes {
		l.Errorf(diag.Pos{File: "PLUGIN.md", Line: bodyLine, Col: 1}, "the instructions are %d bytes, more than the limit of %d", len(p.Instructions), MaxInstructionsBytes)
	}
	if err := checkText(string(body), true); err != nil {
		l.Errorf(posOf(err.Off), "the body %v", err)
	}
	return blocks
}

// nestingOK reports whether no line of body starts with more than max block
// quote markers and list markers (the 0-based index of the first line that
// does, if any). A thematic break ("* * *", "- - -") is not nesting.
func nestingOK(body []byte, max int) (int, bool) {
	for li, line := range bytes.Split(body, []byte("\n")) {
		if !isThematicBreak(line) && leadingMarkers(line, max) > max {
			return li, false
		}
	}
	return 0, true
}

// leadingMarkers counts the block quote (">") and list markers ("-", "+",
// "*", "1.", "1)" followed by a space) a line starts with, up to max+1.
func leadingMarkers(line []byte, max int) int {
	n := 0
	for i := 0; i < len(line) && n <= max; {
		c := line[i]
		space := func(j int) bool { return j >= len(line) || line[j] == ' ' || line[j] == '\t' || line[j] == '\r' }
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '>':
			i++
			n++
		case (c == '-' || c == '+' || c == '*') && space(i+1):
			i++
			n++
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j >= len(line) || (line[j] != '.' && line[j] != ')') || !space(j+1) {
				return n
			}
			i = j + 1
			n++
		default:
			return n
		}
	}
	return n
}

// isThematicBreak reports a line of three or more "-", "*" or "_" (the same
// one) and spaces or tabs only.
func isThematicBreak(line []byte) bool {
	var mark byte
	n := 0
	for _, c := range line {
		switch {
		case c == ' ' || c == '\t' || c == '\r':
		case (c == '-' || c == '*' || c == '_') && (mark == 0 || c == mark):
			mark = c
			n++
		default:
			return false
		}
	}
	return n >= 3
}
