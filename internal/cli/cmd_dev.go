package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/pkuinfo/harness/internal/devserver"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/simcampus"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/spf13/cobra"
)

func init() { register(85, newDevCmd) }

type devFlags struct {
	hostFlags
	addr  string
	trust string
}

func newDevCmd(app *App) *cobra.Command {
	var f devFlags
	cmd := &cobra.Command{
		Use:   "dev PATH",
		Short: "Serve the author's page for a document on loopback",
		Long: `dev serves one page for the document at PATH, on a loopback address only: its
review sheet and lint's problems (FILE:LINE:COL, each opening the file there), each
tool as a form generated from its input schema, runs against the simulated campus
(--campus), a secrets file (--secrets) or the keystore's sessions, with the result
JSON and the step trace (each request's answer, redacted; each step's output and
time), the document's own test cases, a jq and CSS scratch pane compiled by the
engine, widget previews with their data source's data, and a reload whenever a
file of the document changes.

The page's address holds a random token and is printed on stdout; a request whose
Host or Origin is not the server's own loopback origin is refused. Stop with Ctrl-C.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, shutdownSignal)
			defer stop()
			return serveDev(ctx, app, args[0], &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:0", "the loopback address to listen on (HOST:PORT; port 0 picks a free one)")
	fl.StringVar(&f.trust, "trust", "community", "trust of the document: official or community")
	fl.StringVar(&f.services, "services", "", "campus service catalogue entries (YAML), over the built-in ones")
	fl.StringVar(&f.secrets, "secrets", "", "session credentials per campus service (YAML)")
	fl.StringArrayVar(&f.resolve, "resolve", nil, "HOST:PORT:ADDR: connect to ADDR for a declared web origin (repeatable)")
	fl.BoolVar(&f.campus, "campus", false, "run against the simulated campus started in this process")
	return cmd
}

// checkDevAddr refuses an address that is not a loopback one.
func checkDevAddr(addr string) error {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return Exitf(ExitUsage, "--addr %q: %v", addr, err)
	}
	if !registry.IsLoopbackHost(h) {
		return Exitf(ExitUsage, "--addr %q: harness dev listens on loopback only (127.0.0.1, [::1] or localhost)", addr)
	}
	return nil
}

// devListen listens on a loopback address, checking the listener too.
func devListen(addr string) (net.Listener, error) {
	if err := checkDevAddr(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	if ip, ok := ln.Addr().(*net.TCPAddr); !ok || !ip.IP.IsLoopback() {
		ln.Close()
		return nil, Exitf(ExitUsage, "--addr %q did not give a loopback listener (%v)", addr, ln.Addr())
	}
	return ln, nil
}

func serveDev(ctx context.Context, app *App, path string, f *devFlags) error {
	if f.trust != "official" && f.trust != "community" {
		return Exitf(ExitUsage, "--trust must be official or community, not %q", f.trust)
	}
	if _, err := os.Stat(path); err != nil {
		return Exit(ExitUsage, err)
	}
	if err := checkDevAddr(f.addr); err != nil {
		return err
	}
	mode := "the keystore's sessions (harness login)"
	var scrub []string
	switch {
	case f.campus:
		mode = "the simulated campus"
		scrub = []string{simcampus.DemoStudentID, simcampus.DemoStudentName}
	case f.secrets != "":
		mode = "live, with the sessions of " + f.secrets
	}
	// The document's kv and preferences live in memory for the server's
	// life: trying a tool must not change the installed one's store.
	hf := f.hostFlags
	hf.memory = true
	h, stopHost, err := openHost(app, hf, false)
	if err != nil {
		return err
	}
	defer stopHost()
	srv, err := devserver.New(devserver.Config{
		Path: path,
		Load: func() (*manifest.Plugin, diag.List, error) {
			p, l, err := loadLocal(path)
			if err != nil {
				if rl, ok := readProblem(path, err); ok {
					return nil, rl, nil
				}
				return nil, diag.List{}, err
			}
			return p, l, nil
		},
		Host:  h,
		Mode:  mode,
		Trust: registry.Trust(f.trust),
		Scrub: scrub,
	})
	if err != nil {
		return Exit(ExitFailed, err)
	}
	ln, err := devListen(f.addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go srv.Watch(ctx)
	fmt.Fprintf(app.Stdout, "harness dev: %s at %s\n", path, srv.URL(ln.Addr().String()))
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			return Exit(ExitFailed, err)
		}
	case <-ctx.Done():
		sctx, c := context.WithTimeout(context.Background(), 3*time.Second)
		defer c()
		_ = hs.Shutdown(sctx)
	}
	return nil
}
