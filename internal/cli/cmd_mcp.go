package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/registry"
	"github.com/spf13/cobra"
)

func init() { register(70, newMCPCmd) }

func newMCPCmd(app *App) *cobra.Command {
	var (
		caps     []string
		services string
		secrets  string
		resolve  []string
		noElicit bool
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the installed and bundled documents' tools as an MCP server on stdio",
		Long: `mcp serves the catalogue of harness tools (the same tools as harness tools) over
the Model Context Protocol on stdin and stdout. Tool names are plugin__tool. Every
call is made as the agent and meets the permission rules: an effect that is off, a
userOnly tool, a bad input are refused as tool errors. A call that asks (a community
write, money or public tool, an alwaysAsk tool, or a write after untrusted data in
the session) goes to the client's user as an elicitation when the client supports
that, and is refused otherwise (or always, with --no-elicit). Each result is the
envelope {source, untrusted, data}.

Requests leave through the credential-signing proxy with the home folder's
keystore (or --secrets) and the built-in service catalogue (plus --services).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			h, stop, err := openHost(app, hostFlags{services: services, secrets: secrets, resolve: resolve}, true)
			if err != nil {
				return err
			}
			defer stop()
			opts := append(capabilityOption(cmd, caps), h.RegistryOptions()...)
			r, err := openRegistry(ctx, app, opts...)
			if err != nil {
				return err
			}
			seen := len(r.Problems())
			srv, err := r.MCPServer(registry.MCPOptions{Name: "harness", Version: "1", NoElicit: noElicit})
			if err != nil {
				return Exit(ExitFailed, err)
			}
			for _, p := range r.Problems()[seen:] {
				fmt.Fprintf(app.Stderr, "harness: warning: %s\n", terminalSafe(p.Error()))
			}
			t := &mcp.IOTransport{Reader: io.NopCloser(app.Stdin), Writer: nopWriteCloser{app.Stdout}}
			if err := srv.Run(ctx, t); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
				return Exit(ExitFailed, err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&caps, "capabilities", nil, "the host's capabilities, comma-separated (default: all)")
	fl.StringVar(&services, "services", "", "campus service catalogue entries (YAML), over the built-in ones")
	fl.StringVar(&secrets, "secrets", "", "session credentials per campus service (YAML), instead of the keystore")
	fl.StringArrayVar(&resolve, "resolve", nil, "HOST:PORT:ADDR: connect to ADDR for a declared web origin (repeatable)")
	fl.BoolVar(&noElicit, "no-elicit", false, "refuse calls that ask instead of asking the client's user")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
