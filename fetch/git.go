package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/pkuinfo/harness/manifest"
)

// GitResult is a plugin folder fetched from a git repository.
type GitResult struct {
	Files  map[string][]byte // the files that count, slash paths relative to the folder
	Ref    string            // the full ref name the link resolved to; "" for a commit link
	Commit string            // the pinned commit (40 hex)
	Path   string            // the folder inside the repository ("" for the root)
	Stats  GitStats
}

// GitStats tells how a fetch went.
type GitStats struct {
	Requests  int   // HTTP requests made
	WireBytes int64 // bytes read from the network
	Partial   bool  // trees-only fetch then the folder's blobs (else a depth-1 fetch)
}

// gitClient is the HTTP client for git: redirects only within the origin
// of the first request (CheckGitRedirect).
func gitClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if err := checkRedirectCount(via); err != nil {
				return err
			}
			return CheckGitRedirect(via[0].URL, req.URL)
		},
	}
}

// meter counts requests and bounds the bytes read from the network.
type meter struct {
	base     http.RoundTripper
	limit    int64
	bytes    atomic.Int64
	requests atomic.Int64
}

func (m *meter) RoundTrip(req *http.Request) (*http.Response, error) {
	m.requests.Add(1)
	resp, err := m.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b := &meteredBody{ReadCloser: resp.Body, m: m}
	if strings.HasSuffix(req.URL.Path, "/info/refs") {
		// A ref listing is held whole in memory: it has a bound of its own.
		b.limit = MaxRefListBytes
	}
	resp.Body = b
	return resp, nil
}

type meteredBody struct {
	io.ReadCloser
	m     *meter
	limit int64 // this body's own bound (0: none but the meter's)
	n     int64
	err   error // a breached limit: every later read fails too
}

func (b *meteredBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	// A read that breaches a limit returns nothing of what it read, and the
	// error stays: a reader that drops an error with a full buffer
	// (io.ReadFull) meets it again, and never sees a cut-off listing end
	// as if it were whole.
	if b.m.bytes.Add(int64(n)) > b.m.limit {
		b.err = limitErr("the server sent more than %d bytes", b.m.limit)
		return 0, b.err
	}
	if b.n += int64(n); b.limit > 0 && b.n > b.limit {
		b.err = limitErr("the server's ref listing has more than %d bytes", b.limit)
		return 0, b.err
	}
	return n, err
}

// meteredClient wraps base (nil: a default git client) with a meter.
func meteredClient(base *http.Client, lim Limits) (*http.Client, *meter) {
	if base == nil {
		base = gitClient(0) // the context carries the deadline
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	m := &meter{base: rt, limit: lim.MaxWireBytes}
	c := *base
	c.Transport = m
	return &c, m
}

// GitOptions configure FetchGit.
type GitOptions struct {
	Base     string       // replaces https://github.com (HARNESS_GIT_BASE)
	Client   *http.Client // nil: a default client
	Limits   Limits
	NoFilter bool // never try the trees-only partial fetch
}

// FetchGit fetches the plugin folder a GitHub link names, into memory: it
// lists the refs, resolves REF/PATH, pins the commit (a commit id must be
// reachable from some branch or tag), and takes only the folder's files,
// validating every path. When the server supports it, only the trees of the
// commit are fetched, then only the folder's blobs; otherwise a depth-1
// fetch of the commit.
func FetchGit(ctx context.Context, l *Link, opt GitOptions) (*GitResult, error) {
	lim := opt.Limits.withDefaults()
	ctx, cancel := withDeadline(ctx, lim.Deadline)
	defer cancel()
	repoURL, err := l.CloneURL(opt.Base)
	if err != nil {
		return nil, err
	}
	client, m := meteredClient(opt.Client, lim)
	res, err := fetchGit(ctx, l, repoURL, client, lim, opt.NoFilter)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || os.IsTimeout(err) {
			return nil, limitErr("%s: the fetch took longer than %v", l.String(), lim.Deadline)
		}
		return nil, fmt.Errorf("%s: %w", l.String(), err)
	}
	res.Stats.Requests = int(m.requests.Load())
	res.Stats.WireBytes = m.bytes.Load()
	return res, nil
}

func fetchGit(ctx context.Context, l *Link, repoURL string, client *http.Client, lim Limits, noFilter bool) (*GitResult, error) {
	r, err := openRemote(ctx, repoURL, client)
	if err != nil {
		return nil, err
	}
	rv, err := ResolveRef(r.refs, l.RefPath)
	if err != nil {
		return nil, err
	}
	caps := r.adv.Capabilities
	partial := !noFilter && caps.Supports(capability.Filter) &&
		(caps.Supports(capability.AllowReachableSHA1InWant))
	st := memory.NewStorage()
	f := &gitFetch{r: r, st: st, lim: lim}

	if rv.Ref == "" {
		// A commit id: it must be reachable from an advertised ref. Fetch the
		// commit graph of every tip (commits only when the server can filter),
		// then walk it.
		filter := packp.Filter("")
		if partial {
			filter = "tree:0"
		}
		if err := f.fetch(ctx, tips(r.refs), 0, filter, objectLimitAny(lim)); err != nil {
			return nil, fmt.Errorf("fetching the history to check commit %s: %w", rv.Commit, err)
		}
		if err := reachable(st, tips(r.refs), rv.Commit); err != nil {
			return nil, err
		}
		if !partial {
			return f.collect(ctx, rv, false)
		}
	}
	if partial {
		if err := f.fetch(ctx, []plumbing.Hash{rv.Commit}, 1, packp.FilterBlobNone(), objectLimitTrees(lim)); err != nil {
			if !canFallBack(ctx, err) {
				return nil, err
			}
			// A server that advertised filtering but refused it: the
			// depth-1 fetch below.
			partial = false
		}
	}
	if !partial {
		if err := f.fetch(ctx, []plumbing.Hash{rv.Commit}, 1, "", objectLimitAny(lim)); err != nil {
			return nil, err
		}
	}
	res, err := f.collect(ctx, rv, partial)
	if err != nil {
		return nil, err
	}
	res.Stats.Partial = partial && !f.fellBack
	return res, nil
}

func tips(refs map[string]plumbing.Hash) []plumbing.Hash {
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	for _, h := range refs {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	plumbing.HashesSort(out)
	return out
}

// maxWalk bounds the commits walked to show a commit reachable.
const maxWalk = 200000

// reachable walks the commit graph in st from tips looking for want.
func reachable(st *memory.Storage, from []plumbing.Hash, want plumbing.Hash) error {
	seen := map[plumbing.Hash]bool{}
	stack := append([]plumbing.Hash(nil), from...)
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		if h == want {
			return nil
		}
		if len(seen) > maxWalk {
			return limitErr("more than %d commits to walk to find commit %s", maxWalk, want)
		}
		obj, err := st.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			continue // a tip that is not in the pack (e.g. a tag of a blob)
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			c, err := object.DecodeCommit(st, obj)
			if err != nil {
				return err
			}
			stack = append(stack, c.ParentHashes...)
		case plumbing.TagObject:
			t, err := object.DecodeTag(st, obj)
			if err != nil {
				return err
			}
			stack = append(stack, t.Target)
		}
	}
	return refusedErr("commit %s is not reachable from any branch or tag of the repository", want)
}

type gitFetch struct {
	r        *remote
	st       *memory.Storage
	lim      Limits
	fellBack bool // the partial fetch was refused half-way
}

// canFallBack reports whether a failed partial fetch may be retried as a
// depth-1 fetch: not for a breached limit or an expired deadline.
func canFallBack(ctx context.Context, err error) bool {
	return ctx.Err() == nil && !errors.Is(err, ErrLimit) && !errors.Is(err, ErrRefused)
}

// fetch asks for wants (depth 0: the whole history) with an optional filter,
// checks the pack against ol before inflating anything, and stores it.
func (f *gitFetch) fetch(ctx context.Context, wants []plumbing.Hash, depth int, filter packp.Filter, ol objLimit) error {
	caps := f.r.adv.Capabilities
	req := packp.NewUploadPackRequestFromCapabilities(caps)
	req.Capabilities.Delete(capability.ThinPack)
	if caps.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	req.Wants = wants
	if depth > 0 {
		if !caps.Supports(capability.Shallow) {
			return errors.New("the server does not support shallow fetches")
		}
		_ = req.Capabilities.Set(capability.Shallow)
		req.Depth = packp.DepthCommits(depth)
	}
	if filter != "" {
		_ = req.Capabilities.Set(capability.Filter)
		req.Filter = filter
	}
	resp, err := f.r.sess.UploadPack(ctx, req)
	if err != nil {
		return fmt.Errorf("fetching: %w", err)
	}
	defer resp.Close()
	var rd io.Reader = resp
	if req.Capabilities.Supports(capability.Sideband64k) {
		rd = sideband.NewDemuxer(sideband.Sideband64k, resp)
	} else if req.Capabilities.Supports(capability.Sideband) {
		rd = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, rd); err != nil {
		return fmt.Errorf("reading the pack: %w", err)
	}
	if err := checkPack(buf.Bytes(), ol); err != nil {
		return err
	}
	if err := packfile.UpdateObjectStorage(f.st, bytes.NewReader(buf.Bytes())); err != nil {
		return fmt.Errorf("reading the pack: %w", err)
	}
	return nil
}

// collect walks the commit's tree to the folder and takes its files.
func (f *gitFetch) collect(ctx context.Context, rv Resolved, partial bool) (*GitResult, error) {
	commit, err := object.GetCommit(f.st, rv.Commit)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", rv.Commit, err)
	}
	tree, err := f.tree(commit.TreeHash)
	if err != nil {
		return nil, err
	}
	if rv.Path != "" {
		for _, c := range strings.Split(rv.Path, "/") {
			if _, err := checkComponent(c); err != nil {
				return nil, fmt.Errorf("folder %q: %w", rv.Path, err)
			}
			e := findEntry(tree, c)
			if e == nil {
				return nil, fmt.Errorf("no folder %q at %s", rv.Path, short(rv.Commit))
			}
			switch e.Mode {
			case filemode.Dir:
			case filemode.Symlink:
				return nil, refusedErr("folder %q: %q is a symbolic link", rv.Path, c)
			case filemode.Submodule:
				return nil, refusedErr("folder %q: %q is a submodule", rv.Path, c)
			default:
				return nil, fmt.Errorf("%q is a file, not a folder (for a single file, link to its folder)", rv.Path)
			}
			if tree, err = f.tree(e.Hash); err != nil {
				return nil, err
			}
		}
	}
	fs := newFileSet(f.lim)
	type want struct {
		path string
		hash plumbing.Hash
	}
	var wants []want
	// Folders may share one tree object, so a tiny pack can name billions
	// of paths: the walk counts what it visits, not what the pack holds.
	folders := 0
	var walk func(t *object.Tree, prefix string) error
	walk = func(t *object.Tree, prefix string) error {
		if len(t.Entries) > f.lim.MaxFiles {
			return limitErr("folder %q has %d entries, more than the %d files allowed", "/"+prefix, len(t.Entries), f.lim.MaxFiles)
		}
		for _, e := range t.Entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := prefix + e.Name
			skip, err := fs.checkPath(p)
			if err != nil {
				return err
			}
			if skip {
				continue // hidden: not part of the document, never fetched
			}
			switch e.Mode {
			case filemode.Dir:
				if folders++; folders > f.lim.MaxFiles {
					return limitErr("more than %d folders", f.lim.MaxFiles)
				}
				if err := fs.reserveDir(p); err != nil {
					return err
				}
				sub, err := f.tree(e.Hash)
				if err != nil {
					return err
				}
				if err := walk(sub, p+"/"); err != nil {
					return err
				}
			case filemode.Regular, filemode.Executable, filemode.Deprecated:
				if len(wants) >= f.lim.MaxFiles {
					return limitErr("more than %d files", f.lim.MaxFiles)
				}
				if err := fs.reserve(p, 0); err != nil {
					return err
				}
				wants = append(wants, want{p, e.Hash})
			case filemode.Symlink:
				return refusedErr("%q is a symbolic link", p)
			case filemode.Submodule:
				return refusedErr("%q is a submodule (gitlink)", p)
			default:
				return refusedErr("%q has the unsupported mode %o", p, uint32(e.Mode))
			}
		}
		return nil
	}
	if err := walk(tree, ""); err != nil {
		return nil, err
	}
	if partial && len(wants) > 0 {
		var hs []plumbing.Hash
		seen := map[plumbing.Hash]bool{}
		for _, w := range wants {
			if !seen[w.hash] {
				seen[w.hash] = true
				hs = append(hs, w.hash)
			}
		}
		if err := f.fetch(ctx, hs, 0, "", objectLimitBlobs(f.lim, len(hs))); err != nil {
			if !canFallBack(ctx, err) {
				return nil, fmt.Errorf("fetching the folder's files: %w", err)
			}
			// A server that refused wants of blobs: the depth-1 fetch of
			// the commit, whose tree is the same.
			if err := f.fetch(ctx, []plumbing.Hash{rv.Commit}, 1, "", objectLimitAny(f.lim)); err != nil {
				return nil, err
			}
			f.fellBack = true
		}
	}
	// reserve counted names; now the sizes.
	fs = newFileSet(f.lim)
	for _, w := range wants {
		obj, err := f.st.EncodedObject(plumbing.BlobObject, w.hash)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", w.path, err)
		}
		if err := fs.reserve(w.path, obj.Size()); err != nil {
			return nil, err
		}
		rd, err := obj.Reader()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(rd, f.lim.MaxFileBytes+1))
		rd.Close()
		if err != nil {
			return nil, fmt.Errorf("%q: %w", w.path, err)
		}
		if err := fs.add(w.path, data); err != nil {
			return nil, err
		}
	}
	if _, ok := fs.files[DocumentName]; !ok {
		where := rv.Path
		if where == "" {
			where = "the repository root"
		}
		return nil, fmt.Errorf("no %s in %s at %s", DocumentName, where, short(rv.Commit))
	}
	if err := manifest.Files(fs.files).Check(); err != nil {
		return nil, refusedErr("%v", err)
	}
	return &GitResult{Files: fs.files, Ref: rv.Ref, Commit: rv.Commit.String(), Path: rv.Path}, nil
}

func (f *gitFetch) tree(h plumbing.Hash) (*object.Tree, error) {
	obj, err := f.st.EncodedObject(plumbing.TreeObject, h)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", short(h), err)
	}
	if obj.Size() > f.lim.MaxTreeBytes {
		return nil, limitErr("a folder listing of %d bytes is larger than the %d allowed", obj.Size(), f.lim.MaxTreeBytes)
	}
	return object.DecodeTree(f.st, obj)
}

func findEntry(t *object.Tree, name string) *object.TreeEntry {
	for i := range t.Entries {
		if t.Entries[i].Name == name {
			return &t.Entries[i]
		}
	}
	return nil
}

func short(h plumbing.Hash) string { return h.String()[:12] }
