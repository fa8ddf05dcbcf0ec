package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"

	"github.com/pkuinfo/harness/internal/netguard"
)

// URLResult is a PLUGIN.md fetched by URL. A URL document is always a single
// file: sibling files are never fetched, so tools and widgets of a URL
// document are fenced blocks in its PLUGIN.md.
type URLResult struct {
	Files        map[string][]byte // {"PLUGIN.md": …}
	URL          string            // the URL finally read (after redirects)
	ETag         string            // the validators, for CheckURL
	LastModified string
}

// URLOptions configure FetchURL and CheckURL.
type URLOptions struct {
	// Client replaces the guarded client (tests of the guard itself never
	// need it). The guarded client refuses non-public addresses, redirects
	// out of a loopback origin, and redirects to loopback or private hosts.
	Client *http.Client
	Limits Limits
	// Guard is the address rule (nil: internal/netguard's default, the
	// built-in campus networks); a host whose catalogue extends the campus
	// networks passes its own.
	Guard *netguard.Guard
}

// userAgent names the engine to servers.
const userAgent = "pku-harness-fetch/1"

// FetchURL fetches a URL document.
func FetchURL(ctx context.Context, l *Link, opt URLOptions) (*URLResult, error) {
	_, res, err := getURL(ctx, l, "", "", opt)
	return res, err
}

// CheckURL asks whether a URL document changed since it was fetched with
// validators etag and lastModified (either may be ""): a conditional GET. On
// 304 Not Modified it returns changed=false and no result (nothing but
// headers was transferred); otherwise changed=true with the new document and
// its validators (the caller compares hashes: a server that ignores the
// validators sends the same bytes again).
func CheckURL(ctx context.Context, l *Link, etag, lastModified string, opt URLOptions) (changed bool, res *URLResult, err error) {
	return getURL(ctx, l, etag, lastModified, opt)
}

func getURL(ctx context.Context, l *Link, etag, lastModified string, opt URLOptions) (bool, *URLResult, error) {
	if l.Kind != KindURL {
		return false, nil, fmt.Errorf("%s is a %s link, not a URL document", l.String(), l.Kind)
	}
	lim := opt.Limits.withDefaults()
	ctx, cancel := withDeadline(ctx, lim.Deadline)
	defer cancel()
	g := opt.Guard
	if g == nil {
		g = netguard.Default
	}
	// The campus rule of the proxy: a document is never fetched from a
	// campus host, whichever client sends the request.
	if err := checkCampusHost(g, l.URL); err != nil {
		return false, nil, fmt.Errorf("%s: %w", l.String(), err)
	}
	client := opt.Client
	if client == nil {
		client = guardedClient(l.URL, lim.Deadline, g)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.URL.String(), nil)
	if err != nil {
		return false, nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/markdown, text/plain;q=0.9, */*;q=0.1")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		req.Header.Set("If-Modified-Since", lastModified)
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || os.IsTimeout(err) {
			return false, nil, limitErr("%s: no answer within %v", l.String(), lim.Deadline)
		}
		return false, nil, fmt.Errorf("%s: %w", l.String(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && (etag != "" || lastModified != "") {
		return false, nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, nil, fmt.Errorf("%s: the server answered %s", l.String(), resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		if mt == "text/html" || mt == "application/xhtml+xml" {
			return false, nil, fmt.Errorf("%s: the server sent an HTML page, not a %s", l.String(), DocumentName)
		}
	}
	if resp.ContentLength > lim.MaxFileBytes {
		return false, nil, limitErr("%s: the document has %d bytes, more than the %d allowed", l.String(), resp.ContentLength, lim.MaxFileBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, lim.MaxFileBytes+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || os.IsTimeout(err) {
			return false, nil, limitErr("%s: the document did not arrive within %v", l.String(), lim.Deadline)
		}
		return false, nil, fmt.Errorf("%s: reading: %w", l.String(), err)
	}
	if int64(len(body)) > lim.MaxFileBytes {
		return false, nil, limitErr("%s: the document has more than the %d bytes allowed", l.String(), lim.MaxFileBytes)
	}
	if isLFSPointer(body) {
		return false, nil, refusedErr("%s is a Git LFS pointer, not a document", l.String())
	}
	files, err := checkFiles(map[string][]byte{DocumentName: body}, lim)
	if err != nil {
		return false, nil, fmt.Errorf("%s: %w", l.String(), err)
	}
	return true, &URLResult{
		Files:        files,
		URL:          resp.Request.URL.String(),
		ETag:         strings.TrimSpace(resp.Header.Get("ETag")),
		LastModified: strings.TrimSpace(resp.Header.Get("Last-Modified")),
	}, nil
}
