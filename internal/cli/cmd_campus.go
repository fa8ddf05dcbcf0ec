package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/pkuinfo/harness/internal/atomicfile"
	"github.com/pkuinfo/harness/internal/simcampus"
	"github.com/spf13/cobra"
)

func init() { register(90, newCampusCmd) }

// campusSignals gives the context that ends `harness campus`; tests replace it.
var campusSignals = func(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

func newCampusCmd(app *App) *cobra.Command {
	var addrFile, servicesOut, secretsOut string
	var expired []string
	var verification bool
	cmd := &cobra.Command{
		Use:   "campus",
		Short: "Serve the simulated campus on loopback until interrupted",
		Long: `campus serves the simulated campus: one loopback HTTP server per campus service
(portal, card, treehole, wproc, xiaobei, dean, canteen) answering with the real
services' shapes and checking the session as they do. It writes a services file
and a secrets file (fresh fake sessions) and prints their paths, for

  harness run DOCUMENT TOOL --services SERVICES --secrets SECRETS

Date-dependent data follows the clock (HARNESS_NOW moves it). --expired SERVICE
makes a service treat every session as expired (to see login_required);
--verification puts the treehole in its SMS-verification state (code 40002, and
40077 on grades; the demo code is 123456).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCampus(cmd.Context(), app, addrFile, servicesOut, secretsOut, expired, verification)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addrFile, "addr-file", "", "write each service's name and origin, one per line, to `FILE` once serving")
	f.StringVar(&servicesOut, "services-out", "", "write the services file to `FILE` (default: a temporary folder)")
	f.StringVar(&secretsOut, "secrets-out", "", "write the secrets file to `FILE`, mode 0600 (default: a temporary folder)")
	f.StringArrayVar(&expired, "expired", nil, "treat every session of `SERVICE` as expired (repeatable)")
	f.BoolVar(&verification, "verification", false, "put the treehole in its SMS-verification state")
	return cmd
}

func runCampus(ctx context.Context, app *App, addrFile, servicesOut, secretsOut string, expired []string, verification bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	clock, err := app.Clock()
	if err != nil {
		return err
	}
	opts := []simcampus.Option{simcampus.WithClock(clock)}
	for _, s := range expired {
		opts = append(opts, simcampus.WithExpired(s))
	}
	if verification {
		opts = append(opts, simcampus.WithVerification(simcampus.Treehole))
	}
	c, err := simcampus.Start(opts...)
	if err != nil {
		return Exit(ExitUsage, err)
	}
	defer c.Close()

	if servicesOut == "" || secretsOut == "" {
		dir, err := os.MkdirTemp("", "harness-campus-")
		if err != nil {
			return Exitf(ExitFailed, "campus: %v", err)
		}
		defer os.RemoveAll(dir)
		if servicesOut == "" {
			servicesOut = filepath.Join(dir, "services.yaml")
		}
		if secretsOut == "" {
			secretsOut = filepath.Join(dir, "secrets.yaml")
		}
	}
	if err := atomicfile.Write(servicesOut, c.ServicesYAML(), 0o644); err != nil {
		return Exitf(ExitFailed, "campus: %v", err)
	}
	if err := atomicfile.Write(secretsOut, c.SecretsYAML(), 0o600); err != nil {
		return Exitf(ExitFailed, "campus: %v", err)
	}

	svcs := c.Services()
	names := slices.Sorted(maps.Keys(svcs))
	var b strings.Builder
	fmt.Fprintln(&b, "simulated campus on loopback:")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-9s %s\n", n, svcs[n].Origin)
	}
	fmt.Fprintf(&b, "services: %s\nsecrets:  %s\n", servicesOut, secretsOut)
	fmt.Fprintf(&b, "run a tool against it, e.g. the card balance:\n  harness run plugins-official/wallet cardBalance --trust official --services %s --secrets %s\n", servicesOut, secretsOut)
	fmt.Fprintln(&b, "press Ctrl-C to stop")
	fmt.Fprint(app.Stdout, b.String())

	if addrFile != "" {
		var a strings.Builder
		for _, n := range names {
			fmt.Fprintf(&a, "%s %s\n", n, svcs[n].Origin)
		}
		if err := atomicfile.Write(addrFile, []byte(a.String()), 0o644); err != nil {
			return Exitf(ExitFailed, "campus: %v", err)
		}
	}

	ctx, stop := campusSignals(ctx)
	defer stop()
	<-ctx.Done()
	fmt.Fprintln(app.Stderr, "campus: stopped")
	return nil
}
