package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/review"
)

// The helpers that read a document from a path or a link and run every
// stage's checks on it (lint, review, diff, install, update and accept share them).

// loaded is a document read from a path or a link, with what the engine
// knows about it.
type loaded struct {
	plugin *manifest.Plugin
	info   review.Info
	diags  diag.List
}

// loadDocument reads a local path or fetches a link, parses and checks the
// document. trust applies to a local path; a link's trust comes from the link.
func loadDocument(ctx context.Context, app *App, arg, trust string) (*loaded, error) {
	l, err := fetch.ParseLink(arg)
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	if l.Kind == fetch.KindLocal {
		p, dl, err := loadLocal(arg)
		if err != nil {
			return nil, Exit(ExitFailed, err)
		}
		h, err := p.Files.Hash()
		if err != nil {
			return nil, Exit(ExitFailed, err)
		}
		return &loaded{plugin: p, diags: dl, info: review.Info{Hash: h, Trust: trust}}, nil
	}
	doc, err := fetchDocument(ctx, app, l)
	if err != nil {
		// A server's words reach the terminal only made safe.
		return nil, Exit(ExitFailed, errors.New(review.SafeText(err.Error())))
	}
	p, dl := checkFiles(doc.Files)
	h, err := p.Files.Hash()
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	return &loaded{plugin: p, diags: dl, info: review.Info{Hash: h, Trust: l.Trust(), Link: l.String(), Commit: doc.Commit}}, nil
}

// loadLocal reads and checks a local document: manifest parse plus the
// checks of every later stage (steps, access) that lint reports.
func loadLocal(path string) (*manifest.Plugin, diag.List, error) {
	files, err := manifest.ReadDir(path)
	if err != nil {
		return nil, diag.List{}, err
	}
	p, l := checkFiles(files)
	// A single file is read as PLUGIN.md; its problems carry the name it
	// was given (FILE relative to PATH).
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		if name := filepath.Base(path); name != fetch.DocumentName {
			for i := range l.Items {
				if l.Items[i].Pos.File == fetch.DocumentName {
					l.Items[i].Pos.File = name
				}
			}
		}
	}
	return p, l, nil
}

// checkFiles parses a document's files and runs every stage's checks.
func checkFiles(files manifest.Files) (*manifest.Plugin, diag.List) {
	p, l := manifest.Parse(files)
	for _, check := range documentChecks {
		l.Merge(check(p))
	}
	if !l.HasErrors() {
		for _, check := range validChecks {
			l.Merge(check(p))
		}
	}
	l.Sort()
	return p, l
}

// validChecks are warnings only a valid document can be given (what its
// steps never use, what its recorded cases never match): a document with
// errors is not read whole, so they would be guesses.
var validChecks []func(*manifest.Plugin) diag.List

// documentChecks are the checks beyond the manifest (step kinds, access):
// each stage adds its own.
var documentChecks []func(*manifest.Plugin) diag.List

// documentCheck runs the checks beyond the manifest that install runs on a
// document (the steps), so that an update stores nothing install refuses.
func documentCheck(p *manifest.Plugin) diag.List {
	var l diag.List
	for _, check := range documentChecks {
		l.Merge(check(p))
	}
	return l
}

// fetchDocument fetches any link (git, URL or local path), with a progress
// line on stderr when stderr is a terminal.
func fetchDocument(ctx context.Context, app *App, l *fetch.Link) (*fetch.Document, error) {
	progress := app.StderrIsTerminal() && l.Kind != fetch.KindLocal
	start := time.Now()
	if progress {
		fmt.Fprintf(app.Stderr, "fetching %s …\n", l)
	}
	d, err := fetch.Fetch(ctx, l, fetch.Options{GitBase: app.Getenv("HARNESS_GIT_BASE")})
	if err != nil {
		return nil, err
	}
	if progress {
		fmt.Fprintf(app.Stderr, "fetched %d files, %d bytes, in %.1fs\n", len(d.Files), d.Files.Size(), time.Since(start).Seconds())
	}
	return d, nil
}
