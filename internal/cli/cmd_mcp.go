package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/steps"
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
			res, err := parseResolve(resolve)
			if err != nil {
				return Exit(ExitUsage, err)
			}
			cat := proxy.Builtin()
			if services != "" {
				over, err := proxy.LoadServices(services)
				if err != nil {
					return Exit(ExitUsage, err)
				}
				cat = cat.Merge(over)
			}
			dir, err := app.Home()
			if err != nil {
				return Exit(ExitFailed, err)
			}
			var keys proxy.Keystore
			if secrets != "" {
				sec, err := proxy.LoadSecrets(secrets)
				if err != nil {
					return Exit(ExitUsage, err)
				}
				keys = proxy.MemKeystore(sec)
			} else if _, err := os.Stat(filepath.Join(dir, "keystore.json")); err == nil {
				ks, err := proxy.OpenKeystore(filepath.Join(dir, "keystore.json"))
				if err != nil {
					return Exit(ExitFailed, err)
				}
				keys = ks
			}
			px := proxy.New(proxy.Config{Catalogue: cat, Keystore: keys, Resolve: res})
			opts := append(capabilityOption(cmd, caps), registry.WithCompiler(documentCompiler(dir, cat, px)))
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

// documentCompiler compiles a document with the interpreter; each call runs
// through its own proxy call (cookie jar, counters), with the plugin's KV
// store when it declares kv, and the registry's preference values.
func documentCompiler(home string, cat proxy.Catalogue, px *proxy.Proxy) registry.Compiler {
	return func(p *manifest.Plugin) (registry.Runner, error) {
		prog, l := interpreter.Compile(p, interpreter.WithAuthHeaders(authHeaders(cat)))
		if l.HasErrors() {
			return nil, fmt.Errorf("%s does not compile: %v", p.ID, l.Err())
		}
		return registry.RunnerFunc(func(ctx context.Context, req registry.RunRequest) (any, error) {
			for _, svc := range prog.Services(req.Tool) {
				if _, ok := cat[svc]; !ok {
					return nil, fmt.Errorf("tool %s calls campus service %q, which the service catalogue does not know", req.Tool, svc)
				}
			}
			call := px.NewCall(p.ID, p.Access)
			opts := []interpreter.RunOption{
				interpreter.WithTransport(interpreter.ProxyTransport{Call: call}),
				interpreter.WithRedact(call.Redact),
				interpreter.WithPrefs(req.Prefs),
			}
			if p.HasAbility("kv") {
				lim, _ := prog.Limits(req.Tool)
				kv, err := steps.OpenKV(home, p.ID, req.Trust != registry.Official, lim)
				if err != nil {
					return nil, err
				}
				opts = append(opts, interpreter.WithKV(kv))
			}
			res, err := prog.Run(ctx, req.Tool, req.Input, opts...)
			if err != nil {
				return nil, errors.New(call.Redact(err.Error()))
			}
			return json.RawMessage(call.Redact(string(res.JSON))), nil
		}), nil
	}
}
