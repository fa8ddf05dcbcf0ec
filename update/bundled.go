package update

import (
	"fmt"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
)

// Bundle is a document built into the binary that updates from its link,
// as the official documents do ("they too update from their links").
type Bundle struct {
	ID    string
	Link  string // its canonical link
	Ref   string // the full ref the link follows ("refs/heads/main")
	Files manifest.Files
	// Version is the bundled copy's version ("": read from Files when
	// needed).
	Version string
}

func (b Bundle) version() string {
	if b.Version == "" {
		if p, _ := manifest.Parse(b.Files); p != nil {
			return p.Version
		}
	}
	return b.Version
}

// Copy is the copy of a bundled document in use: the bundled files, or an
// update of them stored in the home (fetched from the bundle's link and
// applied under the update rules). The bundled copy is the floor: a stored
// update is used only while it is not older than the bundled copy, so a
// newer build's bundled copy takes the place of an older stored update.
type Copy struct {
	Bundle
	// Files, Plugin, Hash and Version are the copy in use. Version (and
	// BundledVersion) may be "" when the bundled copy is in use: the
	// bundled files are parsed only when asked (VersionInUse), so a
	// command that only opens the registry parses them once.
	Files   manifest.Files
	Plugin  *manifest.Plugin
	Hash    string
	Version string
	// Trust is the copy's trust: official for the bundled files, and for a
	// stored update only when the link is into the official repository
	// (the rule install uses: fetch.Link.Trust).
	Trust string
	// Updated is true when Files are a stored update.
	Updated bool
	// BundledHash and BundledVersion are the bundled copy's.
	BundledHash, BundledVersion string
	// Entry is the check state (a copy; nil before the first check, or when
	// it was kept for another link than the bundle's).
	Entry *fetch.Entry
	// Obsolete says why a stored update is not used: the bundled copy is
	// newer, or the stored files cannot be read. "" otherwise.
	Obsolete string
}

// VersionInUse is the version of the copy in use.
func (c Copy) VersionInUse() string {
	if c.Version == "" && !c.Updated {
		return c.Bundle.version()
	}
	return c.Version
}

// FloorVersion is the bundled copy's version.
func (c Copy) FloorVersion() string {
	if c.BundledVersion == "" {
		return c.Bundle.version()
	}
	return c.BundledVersion
}

// BundledWins reports whether a bundled copy of version bundled takes the
// place of a stored update of version stored: only when it is the higher
// version (the floor). Equal versions, or versions that cannot be ordered
// (an update the user accepted), keep the stored update.
func BundledWins(bundled, stored string) bool {
	cmp, ok := CompareVersions(bundled, stored)
	return ok && cmp > 0
}

// Current is the copy of b in use, given the home's state (nil: none) and
// its store: a stored update of b's link when one is recorded, readable and
// not older than the bundled copy; else the bundled copy. It never fails:
// what keeps a stored update from use is said in Obsolete, and the bundled
// copy works.
func Current(st *fetch.Store, state *fetch.State, b Bundle) (Copy, error) {
	bh, err := b.Files.Hash()
	if err != nil {
		return Copy{}, fmt.Errorf("bundled document %s: %w", b.ID, err)
	}
	c := Copy{Bundle: b, Files: b.Files, Hash: bh, BundledHash: bh, Version: b.Version, BundledVersion: b.Version, Trust: fetch.TrustOfficial}
	var e *fetch.Entry
	if state != nil {
		e = state.Bundled[b.ID]
	}
	if e == nil || e.Link != b.Link {
		// Another link's state (a build that moved the document) is not
		// this bundle's: its check starts again.
		return c, nil
	}
	ec := *e
	c.Entry = &ec
	if e.Hash == "" || e.Hash == bh {
		return c, nil
	}
	files, err := st.Files(e.Hash)
	if err != nil {
		c.Obsolete = fmt.Sprintf("the stored update %s cannot be used (%v): the bundled copy is in use", e.Version, err)
		return c, nil
	}
	p, dl := manifest.Parse(files)
	if dl.HasErrors() || p.ID != b.ID {
		c.Obsolete = fmt.Sprintf("the stored update %s is not a valid %s: the bundled copy is in use", e.Version, b.ID)
		return c, nil
	}
	bv := b.version()
	c.Version, c.BundledVersion = bv, bv
	if BundledWins(bv, p.Version) {
		c.Obsolete = fmt.Sprintf("the bundled copy %s is newer than the stored update %s", bv, p.Version)
		return c, nil
	}
	trust := fetch.TrustCommunity
	if l, err := fetch.ParseLink(e.Link); err == nil {
		trust = l.Trust()
	}
	c.Files, c.Plugin, c.Hash, c.Version, c.Trust, c.Updated = files, p, e.Hash, p.Version, trust, true
	return c, nil
}

// Installed describes the copy in use for the checker: its link is checked
// as an installed one's is, against the copy in use, with the bundled
// version as the floor.
func (c Copy) Installed() Installed {
	in := Installed{ID: c.ID, Link: c.Link, Hash: c.Hash, Version: c.Version, Ref: c.Ref, Plugin: c.Plugin,
		Bundled: true, FloorVersion: c.BundledVersion}
	if in.Plugin == nil {
		p, _ := manifest.Parse(c.Files)
		in.Plugin, in.Version, in.FloorVersion = p, p.Version, p.Version
	}
	if in.FloorVersion == "" {
		in.FloorVersion = c.FloorVersion()
	}
	if e := c.Entry; e != nil {
		in.StoredHash = e.Hash
		in.Commit, in.LastChecked = e.Commit, e.LastChecked
		if e.Ref != "" {
			in.Ref = e.Ref
		}
		if e.SeenHash != c.Hash {
			// The commit seen was judged against another copy (an
			// obsolete stored update, another build's bundled copy): the
			// link is fetched and judged again.
			in.Commit = ""
		}
		if p := e.Pending; p != nil {
			in.PendingHash, in.PendingCommit = p.Hash, p.Commit
		}
	}
	return in
}
