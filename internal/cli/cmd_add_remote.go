package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pkuinfo/harness/internal/netguard"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/remote"
	"github.com/spf13/cobra"
)

func init() { register(41, newAddRemoteCmd) }

func newAddRemoteCmd(app *App) *cobra.Command {
	var yes bool
	var tokenFile string
	var resolve []string
	cmd := &cobra.Command{
		Use:   "add-remote URL",
		Short: "Add a remote plugin: an MCP server over Streamable HTTP",
		Long: `add-remote connects to the MCP server at URL (Streamable HTTP), lists its tools,
prints the review sheet (server name, URL, tools and their effects) and stores
the plugin only after confirmation: --yes, or y at the prompt when stdin is a
terminal.

The plugin id is mcp- and a slug of the server's name from its initialize
answer; its tools are mcp-<server>.<tool>. A tool marked readOnlyHint: true is
a read tool, every other tool a write tool; read tools run, every other tool
asks first, and every result taints the turn. URL is https, or http to a
loopback address, and never a campus host; --resolve HOST:PORT:ADDR dials ADDR
for the server's HOST:PORT (the only way to reach a private address), and is
kept for later calls.

--token-file F reads a bearer token from F (its first line); the token is kept
in the keystore, sent only to URL's origin, and never printed. Adding a server
that is already added reconnects and applies its new tool list (a new write
tool waits: see harness update); without --token-file it keeps its token.
Exit 0 added; 1 failed, nothing stored.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := netguard.ParseResolveFlags(resolve)
			if err != nil {
				return Exit(ExitUsage, err)
			}
			return runAddRemote(cmd.Context(), app, args[0], tokenFile, res, yes)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "add without asking")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "a file whose first line is the server's bearer token")
	cmd.Flags().StringArrayVar(&resolve, "resolve", nil, "HOST:PORT:ADDR: connect to ADDR for the server's HOST:PORT, kept for later calls (repeatable)")
	return cmd
}

// readToken reads a token file: its first line, trimmed, at most 16 KiB.
func readToken(path string) (string, error) {
	f, err := openRegular("--token-file", path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 16<<10+1))
	if err != nil {
		return "", err
	}
	if len(b) > 16<<10 {
		return "", fmt.Errorf("%s is larger than 16 KiB: a token file holds one token", path)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return "", fmt.Errorf("%s holds no token on its first line", path)
	}
	return tok, nil
}

func runAddRemote(ctx context.Context, app *App, rawURL, tokenFile string, resolve map[string]string, yes bool) error {
	u, err := remote.CheckURL(rawURL)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	var token string
	if tokenFile != "" {
		if token, err = readToken(tokenFile); err != nil {
			return Exit(ExitFailed, err)
		}
	}
	dir, err := app.Home()
	if err != nil {
		return Exit(ExitFailed, err)
	}
	now, err := app.Now()
	if err != nil {
		return err
	}
	m, err := remote.Discover(ctx, remote.Conn{URL: u.String(), Token: token, Resolve: resolve}, now)
	if err != nil {
		return Exitf(ExitFailed, "%v; nothing stored", err)
	}
	if err := checkRemoteID(ctx, app, m.ID); err != nil {
		return err
	}
	// A plugin of that id added from another URL keeps its entry and its
	// token: refused before anything is written.
	var changes []remote.Change
	var wider bool
	if all, err := (remote.Store{Dir: dir}).Load(); err != nil {
		return Exit(ExitFailed, err)
	} else if old, ok := all[m.ID]; ok && old.Manifest.URL != m.URL {
		return Exitf(ExitFailed, "%s is already added from %s; remove it first to add it from %s; nothing stored", m.ID, old.Manifest.URL, m.URL)
	} else if ok {
		// Added again: as at an update, the same or narrower applies and
		// wider waits for harness accept.
		if changes, wider, err = remote.Diff(old.Manifest, m); err != nil {
			return Exitf(ExitFailed, "%v; nothing stored", err)
		}
	}
	writeRemoteSheet(app.Stdout, m, token != "")
	if len(changes) > 0 {
		fmt.Fprintln(app.Stdout, "  against the tool list already added:")
		for _, c := range changes {
			mark := " "
			if c.Wider {
				mark = "+"
			}
			fmt.Fprintf(app.Stdout, "    %s %s\n", mark, terminalSafe(c.Tool+": "+c.What))
		}
	}
	if !yes {
		if !app.StdinIsTerminal() {
			return Exitf(ExitFailed, "not added: confirm with --yes (stdin is not a terminal)")
		}
		ok, err := confirm(app.Stdin, app.Stderr, fmt.Sprintf("Add %s (community, remote)? [y/N] ", m.ID))
		if err != nil {
			return Exit(ExitFailed, err)
		}
		if !ok {
			return Exitf(ExitFailed, "not added")
		}
	}
	if token != "" {
		ks, err := proxy.OpenKeystore(filepath.Join(dir, "keystore.json"))
		if err != nil {
			return Exit(ExitFailed, err)
		}
		if err := ks.Put(m.ID, &proxy.ServiceSecrets{Headers: map[string]string{"Authorization": "Bearer " + token}}); err != nil {
			return Exitf(ExitFailed, "the token cannot be kept: %v; nothing stored", err)
		}
	}
	err = remote.Store{Dir: dir}.Change(func(all map[string]*remote.Entry) error {
		if old, ok := all[m.ID]; ok && old.Manifest.URL != m.URL {
			return fmt.Errorf("%s is already added from %s; remove it first to add it from %s", m.ID, old.Manifest.URL, m.URL)
		}
		old, ok := all[m.ID]
		if !ok {
			all[m.ID] = &remote.Entry{Manifest: m, Added: now.UTC(), HasToken: token != ""}
			return nil
		}
		// A token kept before stays the plugin's when none is given.
		old.HasToken = old.HasToken || token != ""
		old.Checked, old.Error = now.UTC(), ""
		if _, w, err := remote.Diff(old.Manifest, m); err != nil {
			return err
		} else if w {
			old.Pending = m
		} else {
			old.Manifest, old.Pending = m, nil
		}
		return nil
	})
	if err != nil {
		return Exitf(ExitFailed, "%v; nothing stored", err)
	}
	if wider {
		fmt.Fprintf(app.Stdout, "%s: its tool list asks for wider access; held: harness accept %s\n", m.ID, m.ID)
		return nil
	}
	fmt.Fprintf(app.Stdout, "added %s (%d tools, community, remote)\n", m.ID, len(m.Tools))
	return nil
}

// checkRemoteID refuses an id that a bundled or installed document, or a
// native plugin, already has.
func checkRemoteID(ctx context.Context, app *App, id string) error {
	r, err := openRegistry(ctx, app)
	if err != nil {
		return err
	}
	if d, ok := r.Document(id); ok && d.Origin != registry.Remote {
		return Exitf(ExitFailed, "%s is already the id of the %s plugin %q; nothing stored", id, d.Origin, d.Name)
	}
	return nil
}

// writeRemoteSheet is a remote plugin's review sheet.
func writeRemoteSheet(w io.Writer, m *remote.Manifest, token bool) {
	fmt.Fprintf(w, "%s — remote plugin (MCP over Streamable HTTP)\n", m.ID)
	fmt.Fprintf(w, "  server:  %s", m.ServerName)
	if m.ServerVersion != "" {
		fmt.Fprintf(w, " %s", m.ServerVersion)
	}
	fmt.Fprintf(w, "\n  url:     %s\n  trust:   community: third-party code nobody reviewed; every result taints the turn\n", m.URL)
	if token {
		fmt.Fprintln(w, "  token:   kept in the keystore, sent only to this server")
	}
	fmt.Fprintln(w, "  campus:  none (a remote plugin never has a campus session)")
	fmt.Fprintf(w, "  tools (%d):\n", len(m.Tools))
	for _, t := range m.Tools {
		mode := "runs"
		if t.Effect != "read" {
			mode = "asks first"
		}
		fmt.Fprintf(w, "    %-40s %-5s %s — %s\n", m.ToolID(&t), t.Effect, mode, oneLine(t.Description, 80))
	}
	for _, s := range m.Skipped {
		fmt.Fprintf(w, "  left out: %s\n", s)
	}
}

// oneLine is the first line of s, cut to n bytes.
func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		i := n
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		s = s[:i] + "…"
	}
	return s
}

// remoteConn is how the home's remote plugins connect: the token from the
// keystore, read at each call.
func remoteConn(dir string) registry.RemoteConn {
	return func(ctx context.Context, m *remote.Manifest) (remote.Conn, error) {
		c := remote.Conn{URL: m.URL, Resolve: m.Resolve}
		path := filepath.Join(dir, "keystore.json")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return c, nil
		}
		ks, err := proxy.OpenKeystore(path)
		if err != nil {
			return c, err
		}
		if ss, ok := ks.Get(m.ID); ok {
			c.Token = strings.TrimPrefix(ss.Headers["Authorization"], "Bearer ")
		}
		return c, nil
	}
}
