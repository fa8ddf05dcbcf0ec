package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pkuinfo/harness/fetch"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/update"
	"github.com/spf13/cobra"
)

// The helpers that open what the home folder holds: the store of installed
// documents, the bundled documents and the registry of every tool.

// openStore opens the store in the home folder with the command's clock.
func openStore(app *App) (*fetch.Store, error) {
	dir, err := app.Home()
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	now, err := app.Now()
	if err != nil {
		return nil, err
	}
	s, err := fetch.OpenStore(dir)
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	if app.Getenv("HARNESS_NOW") != "" {
		s.Now = func() time.Time { return now }
	}
	return s, nil
}

// updateStore opens the store with the command line's clock.
func updateStore(app *App) (*fetch.Store, time.Time, error) {
	now, err := app.Now()
	if err != nil {
		return nil, now, err
	}
	dir, err := app.Home()
	if err != nil {
		return nil, now, Exit(ExitFailed, err)
	}
	st, err := fetch.OpenStore(dir)
	if err != nil {
		return nil, now, Exit(ExitFailed, err)
	}
	st.Now = func() time.Time { return now }
	if app.Getenv("HARNESS_NOW") == "" {
		st.Now = time.Now
	}
	return st, now, nil
}

// officialBundles are the official documents built into the binary, each
// with the link it updates from (read once: they never change in a
// process; not parsed here: the registry parses them).
var officialBundles = sync.OnceValues(func() ([]update.Bundle, error) {
	all, err := official.Files()
	if err != nil {
		return nil, err
	}
	out := make([]update.Bundle, 0, len(official.Names))
	for _, id := range official.Names {
		out = append(out, update.Bundle{ID: id, Link: official.Link(id), Ref: "refs/heads/" + official.Branch, Files: all[id]})
	}
	return out, nil
})

// bundledCopies are the copies of the official documents in use in the
// store's home: each bundled copy, or the update of it stored there when
// that is not older (update.Current: the bundled copy is the floor).
func bundledCopies(store *fetch.Store) ([]update.Copy, *fetch.State, error) {
	bs, err := officialBundles()
	if err != nil {
		return nil, nil, err
	}
	state, err := store.Load()
	if err != nil {
		return nil, nil, err
	}
	out := make([]update.Copy, 0, len(bs))
	for _, b := range bs {
		c, err := update.Current(store, state, b)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, c)
	}
	return out, state, nil
}

// bundledDocuments are the official documents for the registry: the copies
// in use in the store's home, with their trust.
func bundledDocuments(store *fetch.Store) ([]registry.Bundle, error) {
	copies, _, err := bundledCopies(store)
	if err != nil {
		return nil, err
	}
	out := make([]registry.Bundle, 0, len(copies))
	for _, c := range copies {
		out = append(out, registry.Bundle{Files: c.Files, Trust: registry.Trust(c.Trust)})
	}
	return out, nil
}

// openRegistry builds the registry of the home folder: the bundled official
// documents, the installed ones, the remote plugins and the settings tools. Problems (a quarantined plugin, a
// clash of ids) go to stderr as warnings.
func openRegistry(ctx context.Context, app *App, opts ...registry.Option) (*registry.Registry, error) {
	r, err := openRegistryQuiet(ctx, app, opts...)
	if err != nil {
		return nil, err
	}
	for _, p := range r.Problems() {
		fmt.Fprintf(app.Stderr, "harness: warning: %s\n", terminalSafe(p.Error()))
	}
	return r, nil
}

// openRegistryQuiet is openRegistry leaving its problems to the caller
// (harness mcp says each once: problemWarner).
func openRegistryQuiet(ctx context.Context, app *App, opts ...registry.Option) (*registry.Registry, error) {
	store, err := openStore(app)
	if err != nil {
		return nil, err
	}
	bundled, err := bundledDocuments(store)
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	opts = append([]registry.Option{registry.WithRemote(remoteConn(store.Dir()))}, opts...)
	r, err := registry.OpenHome(ctx, store, bundled, opts...)
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	// The agent reads and changes the documents' preferences through these;
	// no document can hold their id (manifest.Reserved).
	r.AddNative(registry.SettingsPlugin, registry.SettingsTools(r)...)
	return r, nil
}

// capabilityOption reads --capabilities: unset means every capability.
func capabilityOption(cmd *cobra.Command, caps []string) []registry.Option {
	if !cmd.Flags().Changed("capabilities") {
		return nil
	}
	return []registry.Option{registry.WithCapabilities(caps...)}
}
