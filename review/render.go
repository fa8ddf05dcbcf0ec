package review

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// ANSI styles for a terminal.
const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiRed   = "\x1b[1;31m"
	ansiGreen = "\x1b[32m"
	ansiDim   = "\x1b[2m"
)

type printer struct {
	w      io.Writer
	colour bool
	err    error
}

func (p *printer) style(code, s string) string {
	if !p.colour || s == "" {
		return s
	}
	return code + s + ansiReset
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// line prints one entry; a widening one is marked "+" (red on a terminal)
// and ends with "(wider)".
func (p *printer) line(wider bool, text string) {
	text = safe(text)
	if wider {
		p.printf("%s\n", p.style(ansiRed, "+ "+text+"  (wider)"))
		return
	}
	p.printf("  %s\n", text)
}

// WriteText writes the sheet for a person. colour adds ANSI colours; pass
// it only when w is a terminal.
func (s *Sheet) WriteText(w io.Writer, colour bool) error {
	p := &printer{w: w, colour: colour}
	title := s.Name
	if s.NameEn != "" {
		title += " (" + s.NameEn + ")"
	}
	p.printf("%s  %s %s\n", p.style(ansiBold, safe(title)), safe(s.ID), safe(s.Version))
	if s.Description != "" {
		p.printf("  %s\n", oneLine(s.Description))
	}
	if s.DescriptionEn != "" {
		p.printf("  %s\n", oneLine(s.DescriptionEn))
	}
	p.printf("Trust: %s\n", s.TrustAbout.String())
	if s.Hash != "" {
		p.printf("Hash: %s\n", safe(s.Hash))
	}
	if s.Link != "" {
		if s.Commit != "" {
			p.printf("Link: %s (commit %s)\n", safe(s.Link), safe(shortCommit(s.Commit)))
		} else {
			p.printf("Link: %s\n", safe(s.Link))
		}
	}
	if s.Update != nil {
		p.printf("Update from %s (%s)\n", safe(orNone(s.Update.FromVersion)), safe(s.Update.FromHash))
	}

	p.printf("\n%s\n", p.style(ansiBold, "Requires"))
	if len(s.Requires) == 0 {
		p.printf("  nothing\n")
	}
	for _, c := range s.Requires {
		p.line(c.Wider, c.Name+": "+c.About.String())
	}
	p.printf("%s\n", p.style(ansiBold, "Campus services (with your campus login)"))
	if len(s.Campus) == 0 {
		p.printf("  none\n")
	}
	for _, c := range s.Campus {
		where := "any path"
		if !c.AnyPath {
			where = "only paths under " + strings.Join(c.Paths, ", ")
		}
		p.line(c.Wider, fmt.Sprintf("%s: %s; %s", c.Service, c.About.String(), where))
	}
	p.printf("%s\n", p.style(ansiBold, "Public websites"))
	if len(s.Web) == 0 {
		p.printf("  none\n")
	}
	for _, o := range s.Web {
		p.line(o.Wider, o.Origin)
	}
	p.printf("%s\n", p.style(ansiBold, "Abilities on this device"))
	if len(s.Abilities) == 0 {
		p.printf("  none\n")
	}
	for _, a := range s.Abilities {
		p.line(a.Wider, a.Name+": "+a.About.String())
	}
	p.printf("%s\n", p.style(ansiBold, "Tools"))
	if len(s.Tools) == 0 {
		p.printf("  none\n")
	}
	for _, t := range s.Tools {
		// The engine's words first: the name, the effect and the flags.
		// The titles are the document's words, last and quoted, so a title
		// such as "余额 — read: only reads" cannot pass for the effect.
		text := t.Name
		effect := string(t.Effect) + ": " + t.EffectAbout.String()
		if t.EffectWhy != "" {
			// The engine's finding: the document declares less.
			effect += " (counts as " + string(t.Effect) + ": " + safe(t.EffectWhy) + ")"
		}
		if t.Effect != "read" && !t.Wider {
			effect = p.style(ansiBold, effect)
		}
		text += " — " + effect
		var fl []string
		for _, f := range []struct {
			on   bool
			name string
		}{{t.Untrusted, "untrusted"}, {t.UserOnly, "userOnly"}, {t.AlwaysAsk, "alwaysAsk"}, {t.Serial, "serial"}} {
			if f.on {
				fl = append(fl, f.name+": "+FlagWords(f.name).En)
			}
		}
		if len(fl) > 0 {
			text += "; " + strings.Join(fl, "; ")
		}
		var titles []string
		if t.Title != "" && t.Title != t.Name {
			titles = append(titles, strconv.Quote(t.Title))
		}
		if t.TitleEn != "" {
			titles = append(titles, "(en "+strconv.Quote(t.TitleEn)+")")
		}
		if len(titles) > 0 {
			text += "; title " + strings.Join(titles, " ")
		}
		p.line(t.Wider, text)
	}
	if s.Update != nil {
		p.printf("\n%s\n", p.style(ansiBold, "Changes"))
		if len(s.Update.Changes) == 0 {
			p.printf("  none: the same document\n")
		}
		for _, c := range s.Update.Changes {
			c.Message = safe(c.Message)
			switch {
			case c.Wider:
				p.printf("%s\n", p.style(ansiRed, "+ "+c.Message))
			case c.Kind == Narrowed || c.Kind == Removed:
				p.printf("%s\n", p.style(ansiGreen, "- "+c.Message))
			default:
				p.printf("  %s\n", c.Message)
			}
		}
		if s.Update.Wider {
			p.printf("\n%s\n", p.style(ansiRed, "Lines marked + widen what the installed version may reach or do: the update waits for your confirmation."))
		}
	}
	return p.err
}

// WriteJSON writes the sheet as indented JSON.
func (s *Sheet) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// WriteText writes the diff for a person, one change a line: "+" widens,
// "-" narrows or removes, a blank mark is neutral.
func (d Delta) WriteText(w io.Writer, colour bool) error { return d.writeText(w, colour, false) }

// WriteTextWithDiffs writes the diff as WriteText does, each changed text
// (instructions, a tool's description, steps and schemas) followed by its
// unified diff, whole: what `harness diff --text` prints.
func (d Delta) WriteTextWithDiffs(w io.Writer, colour bool) error {
	return d.writeText(w, colour, true)
}

func (d Delta) writeText(w io.Writer, colour, diffs bool) error {
	p := &printer{w: w, colour: colour}
	if len(d.Changes) == 0 {
		p.printf("no changes\n")
		return p.err
	}
	for _, c := range d.Changes {
		c.Message = safe(c.Message)
		switch {
		case c.Wider:
			p.printf("%s\n", p.style(ansiRed, "+ "+c.Message+"  (wider)"))
		case c.Kind == Narrowed || c.Kind == Removed:
			p.printf("%s\n", p.style(ansiGreen, "- "+c.Message))
		default:
			p.printf("  %s\n", c.Message)
		}
		if diffs {
			for _, l := range c.Diff {
				p.printf("    %s\n", p.diffLine(l))
			}
		}
	}
	if d.Wider {
		p.printf("%s\n", p.style(ansiRed, "wider: the new version may reach or do more than the old one"))
	} else {
		p.printf("%s\n", p.style(ansiDim, "not wider: the same or narrower access"))
	}
	return p.err
}

// diffLine colours one line of a unified diff: additions green, removals
// red, hunk headers dim. The line is already safe for a terminal.
func (p *printer) diffLine(l string) string {
	switch {
	case strings.HasPrefix(l, "+"):
		return p.style(ansiGreen, l)
	case strings.HasPrefix(l, "-"):
		return p.style(ansiRed, l)
	case strings.HasPrefix(l, "@@"):
		return p.style(ansiDim, l)
	}
	return l
}

// WriteJSON writes the diff as {"wider": …, "changes": […]}.
func (d Delta) WriteJSON(w io.Writer) error {
	if d.Changes == nil {
		d.Changes = []Change{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// SafeText replaces control and bidirectional formatting characters, so that
// text from a document or a server cannot move the cursor, recolour or
// reorder a terminal line.
func SafeText(s string) string { return safe(s) }

func safe(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			return '\uFFFD'
		}
		return r
	}, s)
}

func oneLine(s string) string {
	s = safe(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
