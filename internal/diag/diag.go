// Package diag holds source positions and diagnostics: data on nodes, printed
// only at the edge as FILE:LINE:COL: message.
package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a 1-based position in a file of a document. Col counts characters
// (runes), as yaml.v3 does. File is relative to the document's root.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// IsValid reports whether p names a file position.
func (p Pos) IsValid() bool { return p.File != "" || p.Line > 0 }

// String renders the position as FILE:LINE:COL.
func (p Pos) String() string {
	if p.Line <= 0 {
		return p.File
	}
	col := p.Col
	if col <= 0 {
		col = 1
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, col)
}

// Severity of a diagnostic.
type Severity int

// Severities: an error makes the document invalid, a warning does not.
const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// MarshalText renders the severity as its word, for JSON output.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one problem at one position.
type Diagnostic struct {
	Pos      Pos      `json:"pos"`
	Severity Severity `json:"severity"`
	Msg      string   `json:"message"`
}

// String renders the diagnostic as FILE:LINE:COL: message (warnings say so).
func (d Diagnostic) String() string {
	if d.Severity == Warning {
		return d.Pos.String() + ": warning: " + d.Msg
	}
	return d.Pos.String() + ": " + d.Msg
}

// MaxErrors caps how many diagnostics a List keeps; the rest are counted.
const MaxErrors = 100

// List accumulates diagnostics. Its zero value is ready to use.
type List struct {
	Items   []Diagnostic
	Dropped int
}

// Errorf adds an error at pos.
func (l *List) Errorf(pos Pos, format string, args ...any) {
	l.add(Diagnostic{Pos: pos, Severity: Error, Msg: fmt.Sprintf(format, args...)})
}

// Warnf adds a warning at pos.
func (l *List) Warnf(pos Pos, format string, args ...any) {
	l.add(Diagnostic{Pos: pos, Severity: Warning, Msg: fmt.Sprintf(format, args...)})
}

// Add appends diagnostics, keeping the cap.
func (l *List) Add(ds ...Diagnostic) {
	for _, d := range ds {
		l.add(d)
	}
}

// Merge appends another list.
func (l *List) Merge(o List) {
	l.Add(o.Items...)
	l.Dropped += o.Dropped
}

func (l *List) add(d Diagnostic) {
	if len(l.Items) >= MaxErrors {
		l.Dropped++
		return
	}
	l.Items = append(l.Items, d)
}

// HasErrors reports whether any diagnostic is an error.
func (l *List) HasErrors() bool {
	if l.Dropped > 0 {
		return true
	}
	for _, d := range l.Items {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns only the errors.
func (l *List) Errors() []Diagnostic {
	var out []Diagnostic
	for _, d := range l.Items {
		if d.Severity == Error {
			out = append(out, d)
		}
	}
	return out
}

// Sort orders by file, line, column and message, and drops exact duplicates.
func (l *List) Sort() {
	sort.SliceStable(l.Items, func(i, j int) bool {
		a, b := l.Items[i], l.Items[j]
		if a.Pos.File != b.Pos.File {
			// PLUGIN.md first, then the rest by name.
			if a.Pos.File == "PLUGIN.md" || b.Pos.File == "PLUGIN.md" {
				return a.Pos.File == "PLUGIN.md"
			}
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		return a.Msg < b.Msg
	})
	out := l.Items[:0]
	for i, d := range l.Items {
		if i > 0 && d == l.Items[i-1] {
			continue
		}
		out = append(out, d)
	}
	l.Items = out
}

// Error implements error: every diagnostic on its own line.
func (l *List) Error() string {
	var b strings.Builder
	for i, d := range l.Items {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	if l.Dropped > 0 {
		fmt.Fprintf(&b, "\n%d more problems were not shown", l.Dropped)
	}
	return b.String()
}

// Err returns the list as an error when it holds an error, else nil.
func (l *List) Err() error {
	if l.HasErrors() {
		return l
	}
	return nil
}
