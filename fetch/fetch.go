package fetch

import (
	"context"
	"fmt"
	"net/http"

	"github.com/pkuinfo/harness/manifest"
)

// Document is a fetched document: its files and where exactly they came
// from.
type Document struct {
	Link  *Link
	Files manifest.Files
	Trust string // "official" or "community", from the link

	// Git links.
	Ref    string // full ref name; "" for a commit link
	Commit string // the pinned commit
	Path   string // the folder inside the repository
	Stats  GitStats

	// URL documents.
	URL          string // the URL finally read
	ETag         string
	LastModified string
}

// Options configure Fetch.
type Options struct {
	GitBase string       // replaces https://github.com (HARNESS_GIT_BASE)
	Client  *http.Client // nil: the default client for each kind
	Limits  Limits
}

// Fetch loads the document a link names: a git folder, a URL document, or a
// local folder or PLUGIN.md (read with manifest.ReadDir). Nothing is stored.
func Fetch(ctx context.Context, l *Link, opt Options) (*Document, error) {
	d := &Document{Link: l, Trust: l.Trust()}
	switch l.Kind {
	case KindGitHub:
		r, err := FetchGit(ctx, l, GitOptions{Base: opt.GitBase, Client: opt.Client, Limits: opt.Limits})
		if err != nil {
			return nil, err
		}
		d.Files, d.Ref, d.Commit, d.Path, d.Stats = r.Files, r.Ref, r.Commit, r.Path, r.Stats
	case KindURL:
		r, err := FetchURL(ctx, l, URLOptions{Client: opt.Client, Limits: opt.Limits})
		if err != nil {
			return nil, err
		}
		d.Files, d.URL, d.ETag, d.LastModified = r.Files, r.URL, r.ETag, r.LastModified
	case KindLocal:
		files, err := manifest.ReadDir(l.Path)
		if err != nil {
			return nil, err
		}
		d.Files = files
	default:
		return nil, fmt.Errorf("unknown link kind %q", l.Kind)
	}
	return d, nil
}
