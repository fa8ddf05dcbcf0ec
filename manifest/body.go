package manifest

import (
	"bytes"
	"sort"
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

// inlineComments finds the HTML comments of the inline text
// body[start:stop] as CommonMark reads them, left to right: a code span that
// starts first hides a "<!--" inside it, a comment that starts first hides
// backticks, and a "<!--" with no "-->" after it is text. (The parser runs
// no inline parser, whose cost grows with the square of some inputs; this
// scan is linear but for a binary search per backtick run.)
func inlineComments(body []byte, start, stop int, cut func(from, to int)) {
	type run struct{ at, n int }
	var runs []run
	byLen := map[int][]int{} // indexes in runs, per run length
	for i := start; i < stop; {
		if body[i] != '`' {
			i++
			continue
		}
		j := i
		for j < stop && body[j] == '`' {
			j++
		}
		byLen[j-i] = append(byLen[j-i], len(runs))
		runs = append(runs, run{i, j - i})
		i = j
	}
	closeAt := -1 // the first "-->" at or after the last search's start
	ri := 0
	for i := start; i < stop; {
		k := stop
		if x := bytes.Index(body[i:stop], []byte("<!--")); x >= 0 {
			k = i + x
		}
		skipped := false
		for ri < len(runs) && runs[ri].at < k {
			if runs[ri].at < i {
				ri++
				continue
			}
			same := byLen[runs[ri].n]
			m := sort.SearchInts(same, ri+1)
			if m == len(same) {
				ri++ // no closing run: the backticks are text
				continue
			}
			end := runs[same[m]]
			i, ri = end.at+end.n, same[m]+1
			if i > k {
				skipped = true // the code span holds the "<!--"
				break
			}
		}
		if skipped {
			continue
		}
		if k >= stop {
			return
		}
		if closeAt < k+2 {
			x := bytes.Index(body[k+2:stop], []byte("-->"))
			if x < 0 {
				return // no comment can close from here on
			}
			closeAt = k + 2 + x
		}
		cut(k, closeAt+3)
		i = closeAt + 3
	}
}

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
	lineOf := func(off int) int { // 0-based line index in body: the last line starting at or before off
		return sort.Search(len(starts), func(i int) bool { return starts[i] > off }) - 1
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
	// An HTML comment renders as nothing: a reviewer reading the rendered
	// document never sees it, so the model does not read it either.
	comments := func(start, stop int) {
		for start < stop {
			i := bytes.Index(body[start:stop], []byte("<!--"))
			if i < 0 {
				return
			}
			from := start + i
			end := stop
			if j := bytes.Index(body[from+2:stop], []byte("-->")); j >= 0 {
				end = from + 2 + j + 3
			}
			cuts = append(cuts, cut{from, end})
			start = end
		}
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch h := n.(type) {
		case *ast.HTMLBlock:
			if h.HTMLBlockType == ast.HTMLBlockType2 && h.Lines().Len() > 0 {
				stop := h.Lines().At(h.Lines().Len() - 1).Stop
				if h.HasClosure() {
					stop = max(stop, h.ClosureLine.Stop)
				}
				comments(h.Lines().At(0).Start, stop)
			}
			return ast.WalkSkipChildren, nil
		case *ast.Paragraph, *ast.Heading, *ast.TextBlock:
			if lines := n.Lines(); lines.Len() > 0 {
				inlineComments(body, lines.At(0).Start, lines.At(lines.Len()-1).Stop, func(from, to int) {
					cuts = append(cuts, cut{from, to})
				})
			}
			return ast.WalkSkipChildren, nil
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
			if len(lines) == 0 {
				lines = []yamlx.LineMap{{Line: infoPos.Line + 1}}
			}
			b.Doc = yamlx.Parse("PLUGIN.md", b.Text, 0, lines, yamlLimits[b.Kind], l)
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
