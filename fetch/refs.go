package fetch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// remote is one repository's upload-pack session and what it advertised.
type remote struct {
	url  string
	sess transport.UploadPackSession
	adv  *packp.AdvRefs
	refs map[string]plumbing.Hash // full ref name -> commit (tags peeled), plus "HEAD"
}

// openRemote lists the refs of the repository at repoURL (one request).
func openRemote(ctx context.Context, repoURL string, client *http.Client) (*remote, error) {
	ep, err := transport.NewEndpoint(repoURL)
	if err != nil {
		return nil, fmt.Errorf("repository URL %q: %v", repoURL, err)
	}
	sess, err := githttp.NewClient(client).NewUploadPackSession(ep, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", repoURL, err)
	}
	adv, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		if errors.Is(err, transport.ErrRepositoryNotFound) {
			return nil, fmt.Errorf("%s: no such repository (or it is private)", repoURL)
		}
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return nil, fmt.Errorf("%s: the repository is empty", repoURL)
		}
		return nil, fmt.Errorf("%s: listing refs: %w", repoURL, err)
	}
	r := &remote{url: repoURL, sess: sess, adv: adv, refs: map[string]plumbing.Hash{}}
	for name, h := range adv.References {
		if !strings.HasPrefix(name, "refs/heads/") && !strings.HasPrefix(name, "refs/tags/") {
			continue
		}
		if p, ok := adv.Peeled[name]; ok {
			h = p
		}
		r.refs[name] = h
	}
	if adv.Head != nil {
		r.refs["HEAD"] = *adv.Head
	}
	return r, nil
}

// MaxRefListBytes bounds the bytes ListRefs reads: a server could otherwise
// advertise refs without end and have them all held in memory (about a
// quarter of a million refs fit; GitHub lists branches, tags and pull
// requests).
const MaxRefListBytes = 16 << 20

// ListRefs lists the branches and tags of the git repository at repoURL
// (http or https smart protocol) without fetching any object: one request,
// at most MaxRefListBytes long. The map goes from full ref names
// (refs/heads/…, refs/tags/…, and "HEAD" when advertised) to commits;
// annotated tags are peeled to their commit. client nil means a default
// client with a 60 s timeout.
func ListRefs(ctx context.Context, repoURL string, client *http.Client) (map[string]plumbing.Hash, error) {
	if client == nil {
		client = gitClient(DefaultDeadline)
	}
	client, _ = meteredClient(client, Limits{MaxWireBytes: MaxRefListBytes})
	r, err := openRemote(ctx, repoURL, client)
	if err != nil {
		return nil, err
	}
	return r.refs, nil
}

var shaRe = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Resolved is a GitHub link's REF/PATH split against a repository's refs.
type Resolved struct {
	Ref    string        // full ref name ("refs/heads/feature/x", "HEAD"); "" for a commit
	Commit plumbing.Hash // the commit the ref names (for a commit link, the commit itself)
	Path   string        // the folder inside the repository ("" for the root)
}

// ResolveRef splits refPath (REF/PATH from a link; "" for the default
// branch) against refs as ListRefs returns them. The longest branch or tag
// name that is refPath or a prefix of it followed by "/" wins (a branch over a
// tag of the same name); else a leading full 40-hex commit id is taken as a
// commit, which the caller must still show reachable from some ref.
func ResolveRef(refs map[string]plumbing.Hash, refPath string) (Resolved, error) {
	if refPath == "" {
		h, ok := refs["HEAD"]
		if !ok {
			return Resolved{}, errors.New("the repository advertises no default branch (HEAD)")
		}
		return Resolved{Ref: "HEAD", Commit: h}, nil
	}
	best, bestName := "", ""
	// Sorted, refs/heads come before refs/tags: a branch wins a tie.
	for _, name := range slices.Sorted(maps.Keys(refs)) {
		short, ok := strings.CutPrefix(name, "refs/heads/")
		if !ok {
			short, ok = strings.CutPrefix(name, "refs/tags/")
		}
		if !ok {
			continue
		}
		if (refPath == short || strings.HasPrefix(refPath, short+"/")) && len(short) > len(best) {
			best, bestName = short, name
		}
	}
	if bestName != "" {
		return Resolved{Ref: bestName, Commit: refs[bestName], Path: strings.TrimPrefix(strings.TrimPrefix(refPath, best), "/")}, nil
	}
	first, rest, _ := strings.Cut(refPath, "/")
	if shaRe.MatchString(first) {
		return Resolved{Commit: plumbing.NewHash(first), Path: rest}, nil
	}
	return Resolved{}, fmt.Errorf("no branch or tag matches %q (expected REF/PATH with REF a branch, a tag or a full 40-hex commit id)", truncate(refPath, 120))
}
