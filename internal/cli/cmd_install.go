package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/review"
	"github.com/pkuinfo/harness/update"
	"github.com/spf13/cobra"
)

func init() { register(40, newInstallCmd) }

func newInstallCmd(app *App) *cobra.Command {
	var yes, replace bool
	cmd := &cobra.Command{
		Use:   "install LINK",
		Short: "Fetch a document by link, review it and store it after confirmation",
		Long: `install fetches the document LINK names, checks it, prints its review sheet and
stores it in the home folder only after confirmation: --yes, or y at the prompt
when stdin is a terminal.

LINK is https://github.com/OWNER/REPO/tree/REF/PATH (a folder),
https://github.com/OWNER/REPO/blob/REF/PATH/PLUGIN.md, any https://…/PLUGIN.md
URL (http:// only for a loopback address), or a local path. Documents from the
official repository (github.com/pkuinfo/pku-harness-plugins) are official,
all others community. An id installed from another link is replaced only with
--replace.

Exit 0 installed (or already installed); 1 failed, nothing stored.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInstall(cmd.Context(), app, args[0], yes, replace)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "install without asking")
	cmd.Flags().BoolVar(&replace, "replace", false, "replace a plugin of the same id installed from another link")
	return cmd
}

func runInstall(ctx context.Context, app *App, arg string, yes, replace bool) error {
	l, err := fetch.ParseLink(arg)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	store, err := openStore(app)
	if err != nil {
		return err
	}
	d, err := fetchDocument(ctx, app, l)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	p, dl := checkFiles(d.Files)
	if printDiagnostics(app.Stderr, dl) {
		return Exitf(ExitFailed, "%s: the document is invalid; nothing installed", l)
	}
	hash, err := d.Files.Hash()
	if err != nil {
		return Exit(ExitFailed, err)
	}
	st, err := store.Load()
	if err != nil {
		return Exit(ExitFailed, err)
	}
	if old, ok := st.Plugins[p.ID]; ok {
		if old.Link != l.String() && !replace {
			return Exitf(ExitFailed, "%q is already installed from %s; to replace it with %s, run again with --replace", p.ID, old.Link, l)
		}
		if old.Link == l.String() && old.Hash == hash && old.Quarantined == "" {
			fmt.Fprintf(app.Stdout, "%s %s is already installed (%s)\n", p.ID, p.Version, hash)
			return nil
		}
	}
	// A document the home could not load (its id or a legacy id taken by a
	// bundled or another installed document) is not stored.
	bundled, err := bundledDocuments(store)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	if err := registry.CheckInstall(ctx, store, bundled, p, registry.Trust(d.Trust)); err != nil {
		return Exitf(ExitFailed, "%v; nothing installed", err)
	}
	if name, ok := bundledName(bundled, p.ID); ok && d.Trust != fetch.TrustOfficial {
		app.warn(fmt.Sprintf("%s takes the place of the bundled official document %s (%s) in this home; harness remove %s brings that one back", p.ID, name, p.ID, p.ID))
	}
	if v, ok := bundledVersion(bundled, p.ID); ok && d.Trust == fetch.TrustOfficial && update.BundledWins(v, p.Version) {
		app.warn(fmt.Sprintf("the bundled %s %s is newer than %s: it stays in use (the bundled copy is the floor)", p.ID, v, p.Version))
	}
	info := review.Info{Hash: hash, Trust: d.Trust, Link: l.String(), Commit: d.Commit}
	sheet := review.NewSheet(p, info)
	if old, ok := st.Plugins[p.ID]; ok {
		// Installing again takes the new version at once: the sheet marks
		// what it widens against the installed one, as an update's does.
		if files, err := store.Files(old.Hash); err == nil {
			prev, _ := manifest.Parse(files)
			sheet.Mark(review.Diff(prev, p), old.Version, old.Hash)
		}
	}
	if err := sheet.WriteText(app.Stdout, colourFor(app, app.Stdout)); err != nil {
		return Exit(ExitFailed, err)
	}
	if !yes {
		if !app.StdinIsTerminal() {
			return Exitf(ExitFailed, "not installed: confirm with --yes (stdin is not a terminal)")
		}
		ok, err := confirm(app.Stdin, app.Stderr, fmt.Sprintf("Install %s %s (%s)? [y/N] ", p.ID, p.Version, d.Trust))
		if err != nil {
			return Exit(ExitFailed, err)
		}
		if !ok {
			return Exitf(ExitFailed, "not installed")
		}
	}
	now := store.Now().UTC()
	e := fetch.Entry{
		ID: p.ID, Name: p.Name, Version: p.Version,
		Link: l.String(), Kind: l.Kind,
		Ref: d.Ref, Commit: d.Commit, Path: d.Path,
		ETag: d.ETag, LastModified: d.LastModified,
		Hash: hash, Trust: d.Trust,
		Installed: now, LastChecked: now, Enabled: true,
	}
	if err := store.Install(ctx, e, d.Files, replace); err != nil {
		if errors.Is(err, fetch.ErrOtherLink) {
			return Exitf(ExitFailed, "%v", err)
		}
		return Exit(ExitFailed, err)
	}
	fmt.Fprintf(app.Stdout, "installed %s %s (%s, %s)\n", p.ID, p.Version, d.Trust, hash)
	return nil
}

// bundledVersion is the version of the bundled document with id in use, if
// there is one.
func bundledVersion(bundled []registry.Bundle, id string) (string, bool) {
	for _, b := range bundled {
		if p, _ := manifest.Parse(b.Files); p != nil && p.ID == id {
			return p.Version, true
		}
	}
	return "", false
}

// bundledName is the name of the bundled document with id, if there is one.
func bundledName(bundled []registry.Bundle, id string) (string, bool) {
	for _, b := range bundled {
		if p, _ := manifest.Parse(b.Files); p != nil && p.ID == id {
			return p.Name, true
		}
	}
	return "", false
}
