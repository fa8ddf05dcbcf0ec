package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/spf13/cobra"
)

func init() { register(47, newModesCmd) }

// modeRow is one effect of a plugin as `harness modes` shows it.
type modeRow struct {
	Effect  manifest.Effect `json:"effect"`
	Mode    manifest.Mode   `json:"mode"`    // the mode that applies
	Default manifest.Mode   `json:"default"` // the mode without the user's choice
	Set     manifest.Mode   `json:"set,omitempty"`
	Loosest manifest.Mode   `json:"loosest"` // the loosest the trust allows
	Tools   []string        `json:"tools"`   // the plugin's tools of this effect
}

func newModesCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "modes ID [EFFECT MODE]",
		Short: "Show or set a plugin's mode per effect (auto, ask, off), within its trust's bounds",
		Long: `modes shows, for each effect (read, write, money, public), the mode that applies to
a plugin's tools: auto runs an agent's call, ask asks the user first, off refuses it
(the user's own call runs whatever the mode).
With EFFECT and MODE it sets one: MODE is auto, ask, off, or default (forget the
choice). A mode looser than the plugin's trust allows is refused (a community
plugin's write, money and public tools always ask at least), with exit 1.

Modes are stored where the registry keeps them: state.json for installed documents,
permissions.json for bundled and native plugins. A running harness mcp sees the
change (and tells its clients the tool list changed). An MCP client without
elicitation cannot approve an ask: set the effect to auto for it to run there.
The plugin's standing grants (harness grants) follow the table ("grants" in
--json).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 && len(args) != 3 {
				return Exitf(ExitUsage, "modes takes ID, or ID EFFECT MODE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := openRegistry(cmd.Context(), app)
			if err != nil {
				return err
			}
			d, ok := r.Document(args[0])
			if !ok {
				return Exitf(ExitFailed, "there is no plugin %q (harness list and harness tools show them)", args[0])
			}
			if len(args) == 3 {
				e := manifest.Effect(args[1])
				if e.Rank() < 0 {
					return Exitf(ExitUsage, "effect %q must be read, write, money or public", args[1])
				}
				m := manifest.Mode(args[2])
				switch m {
				case manifest.Auto, manifest.Ask, manifest.Off:
				case "default":
					m = ""
				default:
					return Exitf(ExitUsage, "mode %q must be auto, ask, off or default", args[2])
				}
				before, err := r.Mode(d.ID, e)
				if err != nil {
					return Exit(ExitFailed, err)
				}
				if err := r.SetMode(d.ID, e, m); err != nil {
					return Exit(ExitFailed, fmt.Errorf("refused: %v", err))
				}
				after, err := r.Mode(d.ID, e)
				if err != nil {
					return Exit(ExitFailed, err)
				}
				if !asJSON {
					fmt.Fprintf(app.Stdout, "%s %s: %s (was %s)\n", d.ID, e, after, before)
					return nil
				}
			}
			rows, err := modeRows(r, d)
			if err != nil {
				return Exit(ExitFailed, err)
			}
			grants, gerr := r.Grants(d.ID)
			if gerr != nil {
				app.warn(fmt.Sprintf("the standing grants cannot be read, so none applies: %v", gerr))
			}
			if grants == nil {
				grants = []registry.GrantState{}
			}
			if asJSON {
				enc := json.NewEncoder(app.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"id": d.ID, "trust": d.Trust, "origin": d.Origin, "effects": rows, "grants": grants})
			}
			if len(grants) > 0 {
				defer func() {
					fmt.Fprintf(app.Stdout, "standing grants (harness revoke %s TOOL takes one back):\n", d.ID)
					writeGrants(app, grants)
				}()
			}
			fmt.Fprintf(app.Stdout, "%s (%s, %s)\n", d.ID, d.Trust, d.Origin)
			tw := tabwriter.NewWriter(app.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "EFFECT\tMODE\tDEFAULT\tLOOSEST\tTOOLS")
			for _, row := range rows {
				mode := string(row.Mode)
				if row.Set != "" {
					mode += " (set)"
				}
				tools := strings.Join(row.Tools, ", ")
				if tools == "" {
					tools = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", row.Effect, mode, row.Default, row.Loosest, terminalSafe(tools))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the modes as JSON")
	return cmd
}

func modeRows(r *registry.Registry, d *registry.Document) ([]modeRow, error) {
	ps, err := r.Settings(d.ID)
	if err != nil {
		return nil, err
	}
	rows := []modeRow{}
	for _, e := range manifest.Effects {
		m, err := r.Mode(d.ID, e)
		if err != nil {
			return nil, err
		}
		row := modeRow{Effect: e, Mode: m, Default: registry.DefaultMode(d.Trust, d.Plugin, e),
			Set: ps.Modes[e], Loosest: registry.Loosest(d.Trust, e), Tools: []string{}}
		for _, t := range d.Tools {
			if t.Effect == e {
				row.Tools = append(row.Tools, t.Name)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}
