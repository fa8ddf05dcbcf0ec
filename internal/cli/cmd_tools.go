package cli

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pkuinfo/harness/registry"
	"github.com/spf13/cobra"
)

func init() { register(60, newToolsCmd) }

func newToolsCmd(app *App) *cobra.Command {
	var (
		asJSON bool
		format string
		lang   string
		caps   []string
	)
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Print the model-facing catalogue: plugin__tool names, descriptions, JSON Schemas",
		Long: `tools prints the catalogue an agent is given: the tools of the bundled official
documents and the installed ones, named plugin__tool, with their descriptions,
effects, modes and input JSON Schemas (draft 2020-12, self-contained), and each
document's instructions. userOnly tools, tools whose effect is off, and documents
that are disabled or need a capability the host lacks are left out (--json lists
them under "hidden" with the reason).

--format openai or anthropic prints only the tools, in that API's function-calling
shape. --capabilities lists what the host has (default: every capability).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "", "text", "json", "openai", "anthropic":
			default:
				return Exitf(ExitUsage, "--format must be text, json, openai or anthropic, not %q", format)
			}
			if asJSON {
				if format != "" && format != "json" {
					return Exitf(ExitUsage, "--json and --format %s disagree", format)
				}
				format = "json"
			}
			r, err := openRegistry(cmd.Context(), app, capabilityOption(cmd, caps)...)
			if err != nil {
				return err
			}
			cat, err := r.Catalogue(registry.CatalogueOptions{Lang: lang})
			if err != nil {
				return Exit(ExitFailed, err)
			}
			var v any
			switch format {
			case "json":
				v = cat
			case "openai":
				v = cat.OpenAI()
			case "anthropic":
				v = cat.Anthropic()
			default:
				printCatalogue(app, cat)
				return nil
			}
			b, err := registry.MarshalIndent(v)
			if err != nil {
				return Exit(ExitFailed, err)
			}
			_, err = app.Stdout.Write(b)
			return err
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the catalogue as JSON")
	fl.StringVar(&format, "format", "", "text, json, openai or anthropic")
	fl.StringVar(&lang, "lang", "", "use the documents' translations for this language (e.g. en)")
	fl.StringSliceVar(&caps, "capabilities", nil, "the host's capabilities, comma-separated (default: all)")
	return cmd
}

func printCatalogue(app *App, cat registry.Catalogue) {
	if len(cat.Plugins) == 0 {
		fmt.Fprintln(app.Stdout, "no tools")
	}
	tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
	for i, p := range cat.Plugins {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintln(tw, catalogueHeading(p))
		for _, t := range p.Tools {
			desc, _, _ := strings.Cut(t.Description, "\n")
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", t.Name, t.Effect, t.Mode, cell(shorten(desc, 100)))
		}
	}
	for _, h := range cat.Hidden {
		fmt.Fprintf(tw, "hidden: %s\t%s\t%s\n", h.ID, h.Reason, cell(h.Message))
	}
	tw.Flush()
}

// catalogueHeading is a plugin's heading: the engine's words first (its
// id, its trust, a remote plugin said to be one), then its name quoted as
// what its document, server or host calls it. A name cannot pass for
// another plugin's heading: it never starts the line and cannot leave
// its quotes (cell, then strconv.Quote).
func catalogueHeading(p registry.CataloguePlugin) string {
	name := strconv.Quote(cell(p.Name))
	switch p.Origin {
	case registry.Remote:
		return fmt.Sprintf("%s (%s, remote MCP server) named %s by its server", p.ID, p.Trust, name)
	case registry.Native:
		return fmt.Sprintf("%s (%s) named %s by the host", p.ID, p.Trust, name)
	}
	return fmt.Sprintf("%s (%s) named %s by its document", p.ID, p.Trust, name)
}

// cell makes text safe for one table cell: no control characters, tabs or
// line breaks.
func cell(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ").Replace(terminalSafe(s))
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
