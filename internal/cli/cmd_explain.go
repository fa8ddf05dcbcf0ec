package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/steps"
	"github.com/spf13/cobra"
)

func init() { register(85, newExplainCmd) }

func newExplainCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "explain [KIND]",
		Short: "List the step kinds, or show one kind's fields and example",
		Long: `explain without an argument lists the step kinds with a line each. With a
kind it prints that kind's reference: what it does, its value or fields (type,
default, meaning) and an example, as docs/plugin-format.md has it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := steps.Builtin()
			if len(args) == 0 {
				listKinds(app.Stdout, r)
				return nil
			}
			kind := args[0]
			for _, m := range steps.Modifiers() {
				if m.Name == kind {
					fmt.Fprintf(app.Stdout, "%s is a modifier any step may carry, not a kind.\n\n%s\n", kind, wrap(m.Name+" ("+m.Type.Name()+"): "+m.Doc, 80, ""))
					return nil
				}
			}
			spec, ok := r.Spec(kind)
			if !ok {
				known := r.Kinds()
				for _, m := range steps.Modifiers() {
					known = append(known, m.Name)
				}
				if s := yamlx.Suggest(kind, known); s != "" {
					return Exitf(ExitUsage, "unknown step kind %q (did you mean %q?)", kind, s)
				}
				return Exitf(ExitUsage, "unknown step kind %q (kinds: %s)", kind, strings.Join(r.Kinds(), ", "))
			}
			explainKind(app.Stdout, spec)
			return nil
		},
	}
}

func listKinds(w io.Writer, r *steps.Registry) {
	width := 0
	for _, k := range r.Kinds() {
		width = max(width, len(k))
	}
	fmt.Fprintln(w, "Step kinds (harness explain KIND shows one):")
	fmt.Fprintln(w)
	for _, k := range r.Kinds() {
		s, _ := r.Spec(k)
		fmt.Fprintf(w, "  %-*s  %s\n", width, k, firstSentence(s.Summary))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every step may also carry as: NAME (binds its output to $NAME) and if: JQ (runs it only when true).")
}

// firstSentence cuts a summary at the end of its first sentence.
func firstSentence(s string) string {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '.' && s[i+1] == ' ' {
			if r, _ := utf8.DecodeRuneInString(s[i+2:]); unicode.IsUpper(r) {
				return s[:i+1]
			}
		}
	}
	return s
}

func explainKind(w io.Writer, s steps.Spec) {
	fmt.Fprintln(w, wrap(s.Kind+": "+s.Summary, 80, ""))
	if caps := s.Caps.Words(); len(caps) > 0 {
		fmt.Fprintf(w, "\nIt %s.\n", strings.Join(caps, ", "))
	}
	if s.Short != "" {
		fmt.Fprintf(w, "\nValue: %s.\n", s.Short)
	}
	if len(s.Fields()) > 0 {
		fmt.Fprintln(w, "\nFields:")
		for _, f := range s.Fields() {
			head := f.Type.Name()
			switch {
			case f.Required:
				head += ", required"
			case f.DefaultText() != "":
				head += ", default " + f.DefaultText()
			}
			fmt.Fprintf(w, "  %s (%s)\n", f.Name, head)
			if f.Doc != "" {
				fmt.Fprintln(w, wrap(f.Doc, 80, "      "))
			}
		}
	}
	fmt.Fprintln(w, "\nModifiers: as: NAME and if: JQ, on any step (harness explain as, harness explain if).")
	fmt.Fprintln(w, "\nExample:")
	for _, ln := range strings.Split(strings.TrimRight(s.Example, "\n"), "\n") {
		fmt.Fprintln(w, "  "+ln)
	}
}

// wrap breaks text into lines of at most width characters (a longer word
// stands alone), each starting with indent.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	b.WriteString(line)
	return b.String()
}
