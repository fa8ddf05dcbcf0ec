package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/pkuinfo/harness/registry"
)

// mcpServeFlags are harness mcp's transport flags.
type mcpServeFlags struct {
	http      string // --http ADDR; used when httpSet
	httpSet   bool
	tokenFile string // --token-file F
	// onRefresh hears each registry served after a change of the home.
	onRefresh func(*registry.Registry)
}

// maxTokenFile bounds a --token-file.
const maxTokenFile = 4 << 10

// serveMCP serves svc on stdio, or over Streamable HTTP with --http, until
// the input ends (stdio) or the process is interrupted (HTTP). While it
// serves, the home's state files are watched, so a document installed,
// updated, removed, enabled or disabled, or a mode set, by another process
// reaches the clients as tools/list_changed.
func serveMCP(ctx context.Context, app *App, svc *registry.MCPService, home string, reopen func(context.Context) (*registry.Registry, error), f mcpServeFlags) error {
	if f.tokenFile != "" && !f.httpSet {
		return Exitf(ExitUsage, "--token-file needs --http: on stdio the client is the process that started harness")
	}
	var token string
	if f.tokenFile != "" {
		t, err := readTokenFile(f.tokenFile, app.warn)
		if err != nil {
			return Exit(ExitUsage, err)
		}
		token = t
	}
	var ln net.Listener
	if f.httpSet {
		addr, err := loopbackAddr(f.http)
		if err != nil {
			return Exit(ExitUsage, err)
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return Exitf(ExitFailed, "--http %s: %v", f.http, err)
		}
		defer ln.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if home != "" {
		go svc.Watch(ctx, registry.WatchOptions{
			Paths:     []string{filepath.Join(home, "state.json"), filepath.Join(home, "permissions.json"), filepath.Join(home, "remote.json")},
			Reopen:    reopen,
			OnRefresh: f.onRefresh,
			OnError: func(err error) {
				app.warn(err.Error())
			},
		})
	}
	if ln == nil {
		err := svc.Server().Run(ctx, registry.NewStdioTransport(app.Stdin, app.Stdout, registry.StdioOptions{}))
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			return Exit(ExitFailed, err)
		}
		return nil
	}
	return serveHTTP(ctx, app, svc, ln, token)
}

func serveHTTP(ctx context.Context, app *App, svc *registry.MCPService, ln net.Listener, token string) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", svc.HTTPHandler(registry.HTTPOptions{Token: token}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, shutdownSignal)
	defer stop()
	fmt.Fprintf(app.Stderr, "harness: serving MCP over Streamable HTTP at http://%s/mcp (interrupt to stop)\n", ln.Addr())
	if token != "" {
		fmt.Fprintf(app.Stderr, "harness: every request needs the bearer token from the --token-file\n")
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return Exit(ExitFailed, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close() // open event streams do not end by themselves
	}
	return nil
}

// loopbackAddr reads --http's ADDR: HOST:PORT with a loopback HOST
// (127.0.0.1, [::1] or localhost), or a bare PORT on 127.0.0.1; empty is
// 127.0.0.1 on a free port. Any other address is refused: the tools act
// with the user's campus session.
func loopbackAddr(addr string) (string, error) {
	if addr == "" {
		return "127.0.0.1:0", nil
	}
	if !strings.Contains(addr, ":") {
		addr = "127.0.0.1:" + addr
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--http %s: want HOST:PORT or PORT: %v", addr, err)
	}
	if !registry.IsLoopbackHost(h) {
		return "", fmt.Errorf("--http %s: harness mcp serves loopback addresses only (127.0.0.1, [::1] or localhost): its tools act with your campus session", addr)
	}
	if strings.EqualFold(h, "localhost") {
		h = "127.0.0.1"
	}
	return net.JoinHostPort(h, p), nil
}

// readTokenFile reads a bearer token: the file's text without surrounding
// space, one line of printable ASCII.
func readTokenFile(path string, warn func(string)) (string, error) {
	f, err := openRegular("--token-file", path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("--token-file: %v", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		warn(fmt.Sprintf("%s can be read by other users of this machine (mode %#o): chmod 600 it", path, fi.Mode().Perm()))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("--token-file: %v", err)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("--token-file %s is larger than %d bytes", path, maxTokenFile)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("--token-file %s is empty", path)
	}
	for _, r := range tok {
		if r < 0x21 || r > 0x7e {
			return "", fmt.Errorf("--token-file %s: the token must be one line of printable ASCII without spaces", path)
		}
	}
	return tok, nil
}
