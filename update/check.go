package update

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/review"
	"golang.org/x/sync/errgroup"
)

// Installed is what the update check needs to know of an installed document.
type Installed struct {
	ID      string
	Link    string // the canonical link it was installed from
	Hash    string // the installed version's content hash
	Version string
	Commit  string // GitHub: the installed commit
	// Ref is, for GitHub, the full ref the link resolved to at install
	// ("refs/heads/main", "HEAD"), "" for a commit link. The check follows
	// only this ref: a link that later resolves to another ref (a branch
	// added with a tag's name or a commit id's) fails the check.
	Ref string
	// URL documents: the validators of the installed copy.
	ETag, LastModified string
	LastChecked        time.Time
	// A pending update already found: its commit (GitHub) or validators
	// (URL) and hash. When the link still names it, the check costs no fetch.
	PendingHash, PendingCommit       string
	PendingETag, PendingLastModified string
	// Plugin is the installed version, parsed; nil means Checker.Load.
	Plugin *manifest.Plugin

	// Bundled marks a bundled document (Copy.Installed): Hash and Version
	// are the copy in use, FloorVersion the bundled copy's version (a new
	// version lower than it is refused: the bundled copy is the floor), and
	// StoredHash the stored update's hash when the check was read ("" when
	// none), which Record compares to see whether another run changed it.
	Bundled      bool
	FloorVersion string
	StoredHash   string
}

// Status is the outcome of checking one installed document.
type Status string

// The outcomes.
const (
	StatusNotDue    Status = "not-due"   // checked less than a day ago
	StatusUnchanged Status = "unchanged" // same commit, 304, or same hash
	StatusApply     Status = "apply"     // same or narrower: apply now
	StatusPending   Status = "pending"   // wider: wait for the user
	StatusHeld      Status = "held"      // downgrade: wait, with a warning
	// StatusRefused: a bundled document's link names a version lower than
	// the bundled copy, which is the floor: nothing is stored, the copy in
	// use stays; Decision.Warning says why.
	StatusRefused Status = "refused"
	StatusFailed  Status = "failed" // the installed version stays; Err says why
	// StatusSkipped: not checked (a local path, a quarantined entry), or
	// checked but not recorded because the entry changed meanwhile; Err
	// says why.
	StatusSkipped Status = "skipped"
)

// Result is the outcome of checking one installed document. For apply,
// pending and held it carries the new version.
type Result struct {
	ID       string
	Status   Status
	Decision Decision // for apply, pending and held
	Err      error    // for failed

	// The new version (apply, pending, held) or the new validators
	// (unchanged: a commit that moved without changing the folder, a URL
	// whose validators changed).
	Files        manifest.Files
	Plugin       *manifest.Plugin
	Hash         string
	Version      string
	Commit       string
	ETag         string
	LastModified string
	Ref          string
	// Checked is true when the link was asked (every status but not-due).
	Checked bool
	// StillPending is true for unchanged when the link still names the
	// pending update (which stays pending); false unchanged means the link
	// names the installed version (a pending update is obsolete).
	StillPending bool
}

// URLDoc is a URL document fetched by a conditional request.
type URLDoc struct {
	NotModified        bool // 304: the installed copy is current
	Files              manifest.Files
	ETag, LastModified string
}

// URLFetcher fetches a URL document, conditionally on the installed copy's
// validators.
type URLFetcher func(ctx context.Context, l *fetch.Link, etag, lastModified string) (*URLDoc, error)

// Checker checks installed documents for updates: each link at most once
// per Interval unless Force, GitHub links by one ref listing per repository
// (at most Parallel repositories at once), URL documents by a conditional
// request; only a changed link is fetched, parsed, hashed and diffed.
type Checker struct {
	Now      time.Time     // the clock (HARNESS_NOW in tests)
	Interval time.Duration // default 24 h
	Force    bool          // check even when not due
	Parallel int           // default 8
	Timeout  time.Duration // per link, default fetch.DefaultDeadline

	GitBase   string       // replaces https://github.com (HARNESS_GIT_BASE)
	GitClient *http.Client // nil: fetch's default
	FetchURL  URLFetcher   // URL documents; nil: CheckURL(nil)

	// Load reads an installed version when Installed.Plugin is nil.
	Load func(in Installed) (*manifest.Plugin, error)

	// Validate runs the checks beyond the manifest that install runs (the
	// steps: kinds, programs, what they reach); a new version with an
	// error is refused as invalid, as install would refuse it. nil: the
	// manifest's checks only.
	Validate func(p *manifest.Plugin) diag.List
}

// Due reports whether in should be checked now.
func (c *Checker) Due(in Installed) bool {
	iv := c.Interval
	if iv == 0 {
		iv = 24 * time.Hour
	}
	return c.Force || in.LastChecked.IsZero() || !c.Now.Before(in.LastChecked.Add(iv)) || c.Now.Before(in.LastChecked)
}

// Check checks every installed document; the results are in list's order.
// Every failure is a result, never a panic or an abort of the others.
func (c *Checker) Check(ctx context.Context, list []Installed) []Result {
	par := c.Parallel
	if par <= 0 {
		par = 8
	}
	res := make([]Result, len(list))
	links := make([]*fetch.Link, len(list))
	repos := map[string]*repoRefs{} // clone URL -> listing
	var todo []int
	for i, in := range list {
		res[i] = Result{ID: in.ID}
		if !c.Due(in) {
			res[i].Status = StatusNotDue
			continue
		}
		res[i].Checked = true
		l, err := fetch.ParseLink(in.Link)
		if err != nil {
			res[i].fail(err)
			continue
		}
		links[i] = l
		switch l.Kind {
		case fetch.KindGitHub:
			u, err := l.CloneURL(c.GitBase)
			if err != nil {
				res[i].fail(err)
				continue
			}
			key := strings.ToLower(u) // GitHub names are case-insensitive
			if repos[key] == nil {
				repos[key] = &repoRefs{url: u}
			}
		case fetch.KindLocal:
			res[i].fail(errors.New("a local path has no updates: reinstall it"))
			continue
		}
		todo = append(todo, i)
	}

	// One ref listing per repository, Parallel at once. The goroutines
	// return no error: every failure is kept in its repository's listing
	// or its document's result.
	var lists errgroup.Group
	lists.SetLimit(par)
	for _, u := range slices.Sorted(maps.Keys(repos)) {
		rr := repos[u]
		lists.Go(func() error {
			ctx, cancel := context.WithTimeout(ctx, c.timeout())
			defer cancel()
			rr.refs, rr.err = fetch.ListRefs(ctx, rr.url, c.GitClient)
			return nil
		})
	}
	lists.Wait()

	var checks errgroup.Group
	checks.SetLimit(par)
	for _, i := range todo {
		checks.Go(func() error {
			ctx, cancel := context.WithTimeout(ctx, c.timeout())
			defer cancel()
			defer func() {
				// A bug met by one hostile document fails that document only.
				if p := recover(); p != nil {
					res[i].fail(fmt.Errorf("internal error while checking %s: %v", list[i].ID, p))
				}
			}()
			c.checkOne(ctx, list[i], links[i], repos, &res[i])
			return nil
		})
	}
	checks.Wait()
	return res
}

func (c *Checker) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return fetch.DefaultDeadline
}

func (r *Result) fail(err error) {
	r.Status, r.Err = StatusFailed, err
	r.Files, r.Plugin, r.Hash, r.Version = nil, nil, "", ""
}

func (c *Checker) checkOne(ctx context.Context, in Installed, l *fetch.Link, repos map[string]*repoRefs, r *Result) {
	var files manifest.Files
	switch l.Kind {
	case fetch.KindGitHub:
		u, _ := l.CloneURL(c.GitBase)
		rr := repos[strings.ToLower(u)]
		if rr.err != nil {
			r.fail(rr.err)
			return
		}
		rv, err := fetch.ResolveRef(rr.refs, l.RefPath)
		if err != nil {
			r.fail(fmt.Errorf("%s: %w", l, err))
			return
		}
		if err := sameRef(l, in.Ref, rv.Ref); err != nil {
			r.fail(err)
			return
		}
		if rv.Commit.String() == in.Commit {
			r.Status, r.Commit = StatusUnchanged, in.Commit
			return
		}
		if in.PendingHash != "" && rv.Commit.String() == in.PendingCommit {
			r.Status, r.StillPending = StatusUnchanged, true
			r.Ref, r.Commit = rv.Ref, in.PendingCommit
			return
		}
		g, err := fetch.FetchGit(ctx, l, fetch.GitOptions{Base: c.GitBase, Client: c.GitClient, Limits: fetch.Limits{Deadline: c.timeout()}})
		if err != nil {
			r.fail(err)
			return
		}
		if err := sameRef(l, in.Ref, g.Ref); err != nil {
			r.fail(err)
			return
		}
		files, r.Commit, r.Ref = g.Files, g.Commit, g.Ref
	case fetch.KindURL:
		etag, lm := in.ETag, in.LastModified
		if in.PendingHash != "" {
			etag, lm = in.PendingETag, in.PendingLastModified
		}
		fetchURL := c.FetchURL
		if fetchURL == nil {
			fetchURL = CheckURL(nil)
		}
		d, err := fetchURL(ctx, l, etag, lm)
		if err != nil {
			r.fail(err)
			return
		}
		r.ETag, r.LastModified = d.ETag, d.LastModified
		if d.NotModified {
			r.Status, r.StillPending = StatusUnchanged, in.PendingHash != ""
			if r.ETag == "" && r.LastModified == "" {
				r.ETag, r.LastModified = etag, lm
			}
			return
		}
		files = d.Files
	}
	c.judge(in, files, r)
}

// judge parses, hashes and diffs a fetched version against the installed one.
func (c *Checker) judge(in Installed, files manifest.Files, r *Result) {
	h, err := files.Hash()
	if err != nil {
		r.fail(err)
		return
	}
	r.Files, r.Hash = files, h
	if h == in.Hash {
		r.Status, r.Files = StatusUnchanged, nil
		return
	}
	if h == in.PendingHash {
		r.Status, r.Files, r.StillPending = StatusUnchanged, nil, true
		return
	}
	p, dl := manifest.Parse(files)
	if !dl.HasErrors() && c.Validate != nil {
		dl.Merge(c.Validate(p))
		dl.Sort()
	}
	if dl.HasErrors() {
		first := dl.Errors()[0]
		r.fail(fmt.Errorf("the new version is invalid (%d problems; first: %s)", len(dl.Errors()), first.String()))
		return
	}
	if p.ID != in.ID {
		r.fail(fmt.Errorf("the new version has id %q, not %q: refused", p.ID, in.ID))
		return
	}
	old := in.Plugin
	if old == nil {
		if c.Load == nil {
			r.fail(errors.New("the installed version cannot be read"))
			return
		}
		if old, err = c.Load(in); err != nil {
			r.fail(fmt.Errorf("reading the installed version: %w", err))
			return
		}
	}
	r.Plugin, r.Version = p, p.Version
	if in.Version == "" {
		in.Version = old.Version
	}
	r.Decision = Decide(in.Version, in.Hash, p.Version, h, review.Diff(old, p))
	if in.Bundled && r.Decision.Verdict != Same {
		if cmp, ok := CompareVersions(p.Version, in.FloorVersion); ok && cmp < 0 {
			r.Status, r.Files = StatusRefused, nil
			r.Decision.Verdict = Held
			r.Decision.Warning = fmt.Sprintf("version %s is lower than the bundled %s, which is the floor: refused", p.Version, in.FloorVersion)
			return
		}
	}
	switch r.Decision.Verdict {
	case Same:
		r.Status = StatusUnchanged
	case Apply:
		r.Status = StatusApply
	case Pending:
		r.Status = StatusPending
	case Held:
		r.Status = StatusHeld
	}
}

// sameRef refuses a link that now resolves to another ref than the one it
// was installed from: names are resolved branches and tags first, so the
// repository's owner could otherwise turn a commit link, or a tag link,
// into a branch that moves.
func sameRef(l *fetch.Link, installed, now string) error {
	if installed == now {
		return nil
	}
	was := "commit " + strings.SplitN(l.RefPath, "/", 2)[0]
	if installed != "" {
		was = installed
	}
	is := "a commit"
	if now != "" {
		is = now
	}
	return fmt.Errorf("%s now names %s, not the %s it was installed from: reinstall the link to follow it", l, is, was)
}

type repoRefs struct {
	url  string
	refs map[string]plumbing.Hash
	err  error
}

// CheckURL is the URLFetcher of the fetch package: a conditional GET through
// the guarded client (client nil) or the given one.
func CheckURL(client *http.Client) URLFetcher {
	return func(ctx context.Context, l *fetch.Link, etag, lastModified string) (*URLDoc, error) {
		changed, res, err := fetch.CheckURL(ctx, l, etag, lastModified, fetch.URLOptions{Client: client})
		if err != nil {
			return nil, err
		}
		if !changed {
			return &URLDoc{NotModified: true}, nil
		}
		return &URLDoc{Files: manifest.Files(res.Files), ETag: res.ETag, LastModified: res.LastModified}, nil
	}
}
