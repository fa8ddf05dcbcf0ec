package steps

import (
	"fmt"
	"strings"
)

// Markdown renders the reference of every kind in r: summary, forms, fields
// and example. docs/plugin-format.md holds it between the kinds markers; a test
// keeps it up to date.
func Markdown(r *Registry) string {
	var b strings.Builder
	for _, k := range r.Kinds() {
		s, _ := r.Spec(k)
		fmt.Fprintf(&b, "### `%s`\n\n%s\n\n", s.Kind, s.Summary)
		if caps := s.Caps.Words(); len(caps) > 0 {
			fmt.Fprintf(&b, "It %s.\n\n", strings.Join(caps, ", "))
		}
		if s.Short != "" {
			fmt.Fprintf(&b, "Value: %s.\n\n", s.Short)
		}
		if s.Decl != nil {
			b.WriteString(s.Decl.Table())
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "```yaml\n%s\n```\n\n", s.Example)
	}
	return b.String()
}
