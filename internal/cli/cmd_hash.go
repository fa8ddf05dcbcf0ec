package cli

import (
	"fmt"

	"github.com/pkuinfo/harness/manifest"
	"github.com/spf13/cobra"
)

func init() { register(20, newHashCmd) }

func newHashCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "hash PATH",
		Short: "Print a document's content hash (dirhash h1:)",
		Long: `hash prints the content hash of a document: Go's dirhash Hash1 over the files
that count (every regular file whose path has no component starting with "."),
named by their paths relative to the folder. A single file counts as PLUGIN.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := manifest.ReadDir(args[0])
			if err != nil {
				return Exit(ExitFailed, err)
			}
			h, err := files.Hash()
			if err != nil {
				return Exit(ExitFailed, err)
			}
			fmt.Fprintln(app.Stdout, h)
			return nil
		},
	}
}
