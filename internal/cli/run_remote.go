package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/remote"
)

// isRemote reports whether id names a remote plugin of the home.
func isRemote(app *App, id string) bool {
	dir, err := app.Home()
	if err != nil {
		return false
	}
	all, err := remote.Store{Dir: dir}.Load()
	return err == nil && all[id] != nil
}

// runRemote runs a remote plugin's tool as run runs a document's: the same
// permission rules through the registry, the result envelope's data on
// stdout. Campus flags do not apply: a remote plugin has no campus session.
func runRemote(ctx context.Context, app *App, id, toolName string, f *runFlags) error {
	if f.campus || f.services != "" || f.secrets != "" || len(f.resolve) > 0 {
		return Exitf(ExitUsage, "%s is a remote plugin: it has no campus session, so --campus, --services, --secrets and --resolve do not apply", id)
	}
	input, err := parseInput(f.input)
	if err != nil {
		return Exit(ExitUsage, err)
	}
	in, _ := input.(map[string]any)
	r, err := openRegistry(ctx, app)
	if err != nil {
		return err
	}
	if _, ok := r.Lookup(id + "." + toolName); !ok {
		return Exitf(ExitUsage, "remote plugin %s has no tool %q (harness tools lists them)", id, toolName)
	}
	var ap registry.Approver
	if f.approve.yes() {
		ap = registry.ApproveAll
		if f.approve.always() {
			ap = registry.ApproveAlways
		}
	}
	env, err := r.Invoke(ctx, registry.Call{Tool: id + "." + toolName, Actor: registry.Actor(f.actor), Tainted: f.tainted, Input: in}, ap)
	if err != nil {
		var re *registry.RefusedError
		if errors.As(err, &re) {
			if re.ExitCode() == ExitUsage {
				return Exit(ExitUsage, err)
			}
			return Exit(re.ExitCode(), fmt.Errorf("refused: %w", err))
		}
		return Exit(ExitFailed, fmt.Errorf("%s.%s: %v", id, toolName, terminalSafe(err.Error())))
	}
	b, err := json.Marshal(env.Data)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	fmt.Fprintln(app.Stdout, string(b))
	return nil
}
