package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pkuinfo/harness/internal/diag"
)

// The helpers that write for a person: diagnostics, colour and questions.

// diagLine keeps a diagnostic on one line.
var diagLine = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ")

// printDiagnostics writes lint's lines on w; it reports whether there were errors.
func printDiagnostics(w io.Writer, l diag.List) bool {
	for _, d := range l.Items {
		// One line each, with nothing a terminal would obey: a message may
		// quote the document (a selector holding an escape sequence).
		fmt.Fprintln(w, diagLine.Replace(terminalSafe(d.String())))
	}
	if l.Dropped > 0 {
		fmt.Fprintf(w, "%d more problems were not shown\n", l.Dropped)
	}
	return l.HasErrors()
}

// colourFor reports whether to colour output on w: a terminal, and NO_COLOR unset.
func colourFor(app *App, w io.Writer) bool {
	return isTerminal(w) && app.Getenv("NO_COLOR") == "" && app.Getenv("TERM") != "dumb"
}

// confirm asks a yes/no question; only y or yes (any case) is yes.
func confirm(in io.Reader, out io.Writer, question string) (bool, error) {
	fmt.Fprint(out, question)
	line, err := bufio.NewReader(io.LimitReader(in, 1024)).ReadString('\n')
	if err != nil && line == "" {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}
