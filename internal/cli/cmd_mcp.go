package cli

import (
	"context"
	"io"

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
		ca       string
		noElicit bool
		campus   bool
		serve    mcpServeFlags
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the installed and bundled documents' tools as an MCP server (stdio, or Streamable HTTP with --http)",
		Long: `mcp serves the catalogue of harness tools (the same tools as harness tools) over
the Model Context Protocol on stdin and stdout. Tool names are plugin__tool. Every
call is made as the agent and meets the permission rules: an effect that is off, a
userOnly tool, a bad input are refused as tool errors. A call that asks (a community
write, money or public tool, an alwaysAsk tool, or a write after untrusted data in
the session) goes to the client's user as an elicitation when the client supports
that, and is refused otherwise (or always, with --no-elicit). Each result is the
envelope {source, untrusted, data}, with _meta["pku-harness/untrusted"].

A malformed line on stdio is answered with a JSON-RPC error (-32700 or -32600) and
the session goes on; the requests read before stdin ends are answered before exit.
The tool list follows the home folder: a document installed, updated, removed,
enabled or disabled, or a mode set with harness modes, by any process, reaches the
client as notifications/tools/list_changed. A problem of a document (invalid,
quarantined, refused) is said on stderr once per content of the document, again
only when its content changes, however often the home changes. A refusal names the harness modes line
that would allow the call.

--http ADDR serves Streamable HTTP at http://ADDR/mcp instead (ADDR is HOST:PORT or
PORT on a loopback address; empty means 127.0.0.1 on a free port; the URL is printed
on stderr). Requests whose Host or Origin is not that loopback address are refused
(DNS rebinding), --token-file F requires Authorization: Bearer <the file's token>,
and every session has its own taint and approvals. --campus serves against the
simulated campus started in this process (its services and a demo session).

Requests leave through the credential-signing proxy with the home folder's
keystore (or --secrets) and the built-in service catalogue (plus --services).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			serve.httpSet = cmd.Flags().Changed("http")
			h, stop, err := openHost(app, hostFlags{services: services, secrets: secrets, resolve: resolve, ca: ca, campus: campus}, true)
			if err != nil {
				return err
			}
			defer stop()
			opts := append(capabilityOption(cmd, caps), h.RegistryOptions()...)
			r, err := openRegistryQuiet(ctx, app, opts...)
			if err != nil {
				return err
			}
			svc, err := r.MCPService(registry.MCPOptions{Name: "harness", Version: "1", NoElicit: noElicit})
			if err != nil {
				return Exit(ExitFailed, err)
			}
			// The registry is reopened at every change of the home: each
			// problem is said once per document content.
			w := &problemWarner{app: app}
			w.warn(r.Problems())
			reopen := func(ctx context.Context) (*registry.Registry, error) { return openRegistryQuiet(ctx, app, opts...) }
			serve.onRefresh = func(r *registry.Registry) { w.warn(r.Problems()) }
			return serveMCP(ctx, app, svc, h.Home(), reopen, serve)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&caps, "capabilities", nil, "the host's capabilities, comma-separated (default: all)")
	fl.StringVar(&services, "services", "", "campus service catalogue entries (YAML), over the built-in ones")
	fl.StringVar(&secrets, "secrets", "", "session credentials per campus service (YAML), instead of the keystore")
	fl.StringArrayVar(&resolve, "resolve", nil, "HOST:PORT:ADDR: connect to ADDR for a declared web origin (repeatable)")
	fl.StringVar(&ca, "ca", "", "PEM certificates trusted, beside the system roots, for the hosts --resolve maps only")
	fl.BoolVar(&noElicit, "no-elicit", false, "refuse calls that ask instead of asking the client's user")
	fl.StringVar(&serve.http, "http", "", "serve Streamable HTTP on this loopback HOST:PORT or PORT instead of stdio (empty: 127.0.0.1, a free port)")
	fl.StringVar(&serve.tokenFile, "token-file", "", "with --http: require this file's bearer token on every request")
	fl.BoolVar(&campus, "campus", false, "serve against the simulated campus started in this process (its services and a demo session)")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
