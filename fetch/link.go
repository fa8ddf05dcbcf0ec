package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Kind is the kind of a link.
type Kind string

// The kinds of link.
const (
	KindGitHub Kind = "github" // a GitHub tree or blob link, fetched with git
	KindURL    Kind = "url"    // any http(s) URL of a PLUGIN.md
	KindLocal  Kind = "local"  // a folder or PLUGIN.md on disk
)

// DocumentName is the name of a plugin document's main file.
const DocumentName = "PLUGIN.md"

// OfficialOwner and OfficialRepo name the official plugin repository: a GitHub
// link into it is trusted as official.
const (
	OfficialOwner = "pkuinfo"
	OfficialRepo  = "pku-harness-plugins"
)

// MaxLinkLength bounds the length of a link.
const MaxLinkLength = 2048

// Link is a parsed link. Only the fields of its Kind are set.
type Link struct {
	Kind Kind

	// GitHub: the repository, whether the link names a blob (a PLUGIN.md) or
	// a tree (a folder), and the unsplit, decoded REF/PATH after tree/ or
	// blob/ ("" for the repository root at its default branch). The split
	// between REF and PATH needs the repository's refs: see ResolveRef.
	Owner, Repo string
	Blob        bool
	RefPath     string

	// URL: the document's URL.
	URL *url.URL

	// Local: the absolute path of a folder or a PLUGIN.md.
	Path string
}

// ErrLink is wrapped by every error of ParseLink.
var ErrLink = errors.New("bad link")

// LinkError is a link that ParseLink refused, with what was expected.
type LinkError struct {
	Link string
	Msg  string
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("link %q: %s", truncate(e.Link, 200), e.Msg)
}

// Unwrap makes errors.Is(err, ErrLink) true.
func (e *LinkError) Unwrap() error { return ErrLink }

func linkErr(link, format string, args ...any) error {
	return &LinkError{Link: link, Msg: fmt.Sprintf(format, args...)}
}

const expectGitHub = "expected https://github.com/OWNER/REPO/tree/REF/PATH (a folder) or https://github.com/OWNER/REPO/blob/REF/PATH/PLUGIN.md"

var (
	ownerRe  = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$`)
	repoRe   = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	schemeRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)
)

// ParseLink reads a link strictly. A string with a scheme must be a GitHub
// tree or blob link, or an http(s) URL whose last path segment is PLUGIN.md
// (plain http only for a loopback host); anything else is a local path, made
// absolute against the working folder.
func ParseLink(s string) (*Link, error) {
	if len(s) > MaxLinkLength {
		return nil, linkErr(s, "longer than %d bytes", MaxLinkLength)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return nil, linkErr(s, "contains a control character")
		}
		if unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			// It would reorder the line that shows the link.
			return nil, linkErr(s, "contains a bidirectional or line-separator character (%U)", r)
		}
	}
	if strings.TrimSpace(s) != s || s == "" {
		return nil, linkErr(s, "empty or surrounded by spaces")
	}
	if !schemeRe.MatchString(s) {
		if strings.HasPrefix(strings.ToLower(s), "github.com/") {
			return nil, linkErr(s, "has no scheme; %s", expectGitHub)
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			return nil, linkErr(s, "not a usable local path: %v", err)
		}
		return &Link{Kind: KindLocal, Path: abs}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, linkErr(s, "not a URL: %v", errors.Unwrap(err))
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return nil, linkErr(s, "scheme %q: expected https:// (or http:// for a loopback address) or a local path", u.Scheme)
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return nil, linkErr(s, "a user name or password in a link is refused")
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, linkErr(s, "no host: expected %s://HOST/...", scheme)
	}
	host := strings.ToLower(u.Hostname())
	if host == "github.com" || host == "www.github.com" {
		return parseGitHub(s, u)
	}
	if strings.HasPrefix(host, "github.com.") || strings.HasPrefix(host, "github.com-") || host == "github.com." {
		return nil, linkErr(s, "host %q is not github.com; %s", u.Hostname(), expectGitHub)
	}
	return parseURLDoc(s, u, scheme, host)
}

func parseGitHub(s string, u *url.URL) (*Link, error) {
	if u.Scheme != "https" {
		return nil, linkErr(s, "GitHub links must use https; %s", expectGitHub)
	}
	if u.Port() != "" || strings.HasSuffix(u.Host, ":") {
		return nil, linkErr(s, "a port in a GitHub link is refused; %s", expectGitHub)
	}
	if u.RawQuery != "" || u.ForceQuery {
		return nil, linkErr(s, "a query (?…) in a GitHub link is refused; %s", expectGitHub)
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return nil, linkErr(s, "a fragment (#…) in a GitHub link is refused; %s", expectGitHub)
	}
	raw := u.EscapedPath()
	lower := strings.ToLower(raw)
	for _, enc := range []string{"%2e", "%2f", "%5c", "%25", "%00"} {
		if strings.Contains(lower, enc) {
			return nil, linkErr(s, "an encoded '.', '/', '\\' or '%%' in a GitHub link is refused")
		}
	}
	raw = strings.TrimSuffix(raw, "/")
	if !strings.HasPrefix(raw, "/") {
		return nil, linkErr(s, "%s", expectGitHub)
	}
	segs := strings.Split(raw[1:], "/")
	dec := make([]string, len(segs))
	for i, seg := range segs {
		d, err := url.PathUnescape(seg)
		if err != nil {
			return nil, linkErr(s, "bad escape in path segment %d", i+1)
		}
		if err := checkLinkSegment(d); err != nil {
			return nil, linkErr(s, "path segment %q: %v", seg, err)
		}
		dec[i] = d
	}
	if len(dec) < 2 {
		return nil, linkErr(s, "no OWNER/REPO; %s", expectGitHub)
	}
	owner, repo := dec[0], dec[1]
	if !ownerRe.MatchString(owner) {
		return nil, linkErr(s, "owner %q: expected 1-39 letters, digits or inner hyphens", owner)
	}
	if !repoRe.MatchString(repo) || repo == "." || repo == ".." || strings.HasSuffix(strings.ToLower(repo), ".git") {
		return nil, linkErr(s, "repository %q: expected letters, digits, '.', '-', '_' (without .git)", repo)
	}
	l := &Link{Kind: KindGitHub, Owner: owner, Repo: repo}
	switch {
	case len(dec) == 2:
		// The repository root at the default branch.
		return l, nil
	case dec[2] == "tree" && len(dec) >= 4:
		l.RefPath = strings.Join(dec[3:], "/")
	case dec[2] == "blob" && len(dec) >= 5:
		if dec[len(dec)-1] != DocumentName {
			return nil, linkErr(s, "a blob link must name a %s; %s", DocumentName, expectGitHub)
		}
		l.Blob = true
		l.RefPath = strings.Join(dec[3:len(dec)-1], "/")
	default:
		return nil, linkErr(s, "%s", expectGitHub)
	}
	return l, nil
}

// checkLinkSegment refuses a path segment that could change what a link
// names: empty, ".", "..", backslashes and control characters.
func checkLinkSegment(seg string) error {
	switch {
	case seg == "":
		return errors.New("empty segment (double slash)")
	case seg == "." || seg == "..":
		return errors.New("'.' and '..' segments are refused")
	case strings.ContainsAny(seg, "\\\x00"):
		return errors.New("backslash or NUL refused")
	}
	for _, r := range seg {
		if unicode.IsControl(r) {
			return errors.New("control character refused")
		}
	}
	return nil
}

func parseURLDoc(s string, u *url.URL, scheme, host string) (*Link, error) {
	const expect = "expected an https:// URL ending in /" + DocumentName + " (http:// only for a loopback address)"
	if scheme == "http" && !IsLoopbackHost(host) {
		return nil, linkErr(s, "plain http is accepted only for a loopback address; %s", expect)
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		ip = ip.Unmap()
		if !ip.IsLoopback() && DeniedAddr(ip) != nil {
			return nil, linkErr(s, "address %s is not a public address", ip)
		}
	}
	if p := u.Port(); p != "" {
		if _, err := net.LookupPort("tcp", p); err != nil || p == "0" {
			return nil, linkErr(s, "bad port %q", p)
		}
	}
	raw := u.EscapedPath()
	lower := strings.ToLower(raw)
	for _, enc := range []string{"%2f", "%5c", "%00"} {
		if strings.Contains(lower, enc) {
			return nil, linkErr(s, "an encoded '/' or '\\' in the path is refused")
		}
	}
	segs := strings.Split(u.Path, "/")
	if segs[len(segs)-1] != DocumentName {
		return nil, linkErr(s, "%s", expect)
	}
	for _, seg := range segs[1:] {
		if seg == "." || seg == ".." {
			return nil, linkErr(s, "'.' and '..' segments are refused")
		}
	}
	c := *u
	c.Scheme = scheme
	c.Host = strings.ToLower(u.Host)
	c.Fragment, c.RawFragment = "", ""
	return &Link{Kind: KindURL, URL: &c}, nil
}

// CloneURL is the git URL of a GitHub link's repository: base (the
// HARNESS_GIT_BASE value, "" for https://github.com) + /OWNER/REPO.git. It is
// rebuilt from the parsed owner and repository, never copied from the link.
func (l *Link) CloneURL(base string) (string, error) {
	if l.Kind != KindGitHub {
		return "", fmt.Errorf("a %s link has no git repository", l.Kind)
	}
	if base == "" {
		base = "https://github.com"
	}
	b, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || (b.Scheme != "https" && b.Scheme != "http") || b.Host == "" || b.RawQuery != "" || b.Fragment != "" || b.User != nil {
		return "", fmt.Errorf("git base %q: expected an http(s) URL such as https://github.com", base)
	}
	if b.Scheme == "http" && !IsLoopbackHost(b.Hostname()) {
		return "", fmt.Errorf("git base %q: plain http is accepted only for a loopback address", base)
	}
	return b.String() + "/" + l.Owner + "/" + l.Repo + ".git", nil
}

// IsOfficial reports whether the link points into the official repository.
func (l *Link) IsOfficial() bool {
	return l.Kind == KindGitHub && strings.EqualFold(l.Owner, OfficialOwner) && strings.EqualFold(l.Repo, OfficialRepo)
}

// Trust is the trust level a document from this link gets: "official" for
// the official repository, else "community".
func (l *Link) Trust() string {
	if l.IsOfficial() {
		return TrustOfficial
	}
	return TrustCommunity
}

// Trust levels.
const (
	TrustOfficial  = "official"
	TrustCommunity = "community"
)

// String is the link's canonical spelling (what the state file records).
func (l *Link) String() string {
	switch l.Kind {
	case KindGitHub:
		s := "https://github.com/" + l.Owner + "/" + l.Repo
		if l.RefPath == "" && !l.Blob {
			return s
		}
		segs := strings.Split(l.RefPath, "/")
		for i, seg := range segs {
			segs[i] = url.PathEscape(seg)
		}
		if l.Blob {
			return s + "/blob/" + strings.Join(segs, "/") + "/" + DocumentName
		}
		return s + "/tree/" + strings.Join(segs, "/")
	case KindURL:
		return l.URL.String()
	default:
		return l.Path
	}
}

// RepoKey names the link's repository case-insensitively ("owner/repo"), for
// grouping several documents of one repository behind one ref listing.
func (l *Link) RepoKey() string {
	return strings.ToLower(l.Owner + "/" + l.Repo)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
