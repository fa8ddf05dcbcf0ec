package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pkuinfo/harness/manifest"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Limits bound one fetch. A zero field takes its default.
type Limits struct {
	Deadline      time.Duration // the whole fetch
	MaxWireBytes  int64         // bytes read from the network, all requests together
	MaxFiles      int           // files in the document
	MaxFileBytes  int64         // one file
	MaxTotalBytes int64         // all files together
	MaxDepth      int           // path components of a file inside the document
	MaxTreeBytes  int64         // one git tree object (a folder listing)
}

// The default limits. The document limits match the manifest's.
const (
	DefaultDeadline      = 60 * time.Second
	DefaultMaxWireBytes  = 64 << 20
	DefaultMaxFiles      = manifest.MaxFiles
	DefaultMaxFileBytes  = manifest.MaxFileBytes
	DefaultMaxTotalBytes = manifest.MaxTotalBytes
	DefaultMaxDepth      = manifest.MaxDepth
	DefaultMaxTreeBytes  = 4 << 20
	maxPathBytes         = manifest.MaxPathBytes
)

func (l Limits) withDefaults() Limits {
	if l.Deadline == 0 {
		l.Deadline = DefaultDeadline
	}
	if l.MaxWireBytes == 0 {
		l.MaxWireBytes = DefaultMaxWireBytes
	}
	if l.MaxFiles == 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxFileBytes == 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxTotalBytes == 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxTreeBytes == 0 {
		l.MaxTreeBytes = DefaultMaxTreeBytes
	}
	return l
}

// ErrLimit is wrapped by every error of a breached limit.
var ErrLimit = errors.New("limit exceeded")

// ErrRefused is wrapped by every error of content refused for safety
// (symlinks, submodules, .git entries, escaping or colliding paths, LFS
// pointers).
var ErrRefused = errors.New("refused")

func limitErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrLimit, fmt.Sprintf(format, args...))
}

func refusedErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// ignorable are code points some file systems drop from names (HFS+), so
// ".g\u200cit" is ".git" there.
func stripIgnorable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff, r == 0x00ad:
			return -1
		}
		return r
	}, s)
}

// IsGitName reports whether a path component is, or could be taken by some
// file system for, ".git": any case, trailing dots or spaces, NTFS short
// names (git~1), alternate streams, ignorable code points.
func IsGitName(c string) bool {
	c = strings.ToLower(stripIgnorable(c))
	if i := strings.IndexByte(c, ':'); i >= 0 {
		c = c[:i]
	}
	c = strings.TrimRight(c, ". ")
	return c == ".git" || c == "git~1" || strings.HasPrefix(c, ".git~")
}

// checkComponent validates one component of a path inside a document.
// hidden reports a component that starts with "." (such files do not count
// and are not fetched).
func checkComponent(c string) (hidden bool, err error) {
	switch {
	case c == "":
		return false, refusedErr("empty path component")
	case c == "." || c == "..":
		return false, refusedErr("path component %q escapes the folder", c)
	case IsGitName(c):
		return false, refusedErr("a .git entry (%q) is refused", c)
	case !utf8.ValidString(c):
		return false, refusedErr("path component %q is not UTF-8", c)
	case strings.ContainsAny(c, "\\/:\x00"):
		return false, refusedErr("path component %q contains '\\', '/', ':' or NUL", c)
	case !norm.NFC.IsNormalString(c):
		return false, refusedErr("path component %q is not in Unicode NFC form", c)
	}
	for _, r := range c {
		if unicode.IsControl(r) {
			return false, refusedErr("path component %q contains a control character", c)
		}
	}
	return strings.HasPrefix(c, "."), nil
}

var folder = cases.Fold()

// collisionKey is the name under which two paths collide on a
// case-insensitive or normalising file system.
func collisionKey(p string) string {
	return folder.String(norm.NFC.String(stripIgnorable(p)))
}

// lfsPrefix starts every Git LFS pointer file.
var lfsPrefix = []byte("version https://git-lfs.github.com/spec/")

// isLFSPointer reports whether data is a Git LFS pointer file.
func isLFSPointer(data []byte) bool {
	return len(data) < 1024 && bytes.HasPrefix(data, lfsPrefix)
}

// fileSet collects a document's files under the limits and path rules.
type fileSet struct {
	lim   Limits
	files map[string][]byte
	keys  map[string]string
	total int64
}

func newFileSet(lim Limits) *fileSet {
	return &fileSet{lim: lim, files: map[string][]byte{}, keys: map[string]string{}}
}

// checkPath validates a slash path relative to the document root: every
// component, the depth and the length. skip reports a path with a hidden
// component, which does not count.
func (fs *fileSet) checkPath(p string) (skip bool, err error) {
	if len(p) > maxPathBytes {
		return false, limitErr("path %q is longer than %d bytes", truncate(p, 80), maxPathBytes)
	}
	parts := strings.Split(p, "/")
	if len(parts) > fs.lim.MaxDepth {
		return false, limitErr("path %q is deeper than %d components", truncate(p, 80), fs.lim.MaxDepth)
	}
	for _, c := range parts {
		h, err := checkComponent(c)
		if err != nil {
			return false, fmt.Errorf("%q: %w", p, err)
		}
		skip = skip || h
	}
	if !skip {
		if err := manifest.CheckPath(p); err != nil {
			return false, refusedErr("%v", err)
		}
	}
	return skip, nil
}

// reserve checks that one more file of size n fits, before its bytes are
// read.
func (fs *fileSet) reserve(p string, n int64) error {
	if len(fs.files)+1 > fs.lim.MaxFiles {
		return limitErr("more than %d files", fs.lim.MaxFiles)
	}
	if n > fs.lim.MaxFileBytes {
		return limitErr("file %q has %d bytes, more than the %d allowed", p, n, fs.lim.MaxFileBytes)
	}
	if fs.total+n > fs.lim.MaxTotalBytes {
		return limitErr("the files together exceed %d bytes", fs.lim.MaxTotalBytes)
	}
	k := collisionKey(p)
	if other, ok := fs.keys[k]; ok {
		return refusedErr("paths %q and %q collide on case-insensitive or normalising file systems", other, p)
	}
	fs.keys[k] = p
	return nil
}

// reserveDir records a folder's name so that a file or another folder
// colliding with it is refused.
func (fs *fileSet) reserveDir(p string) error {
	k := collisionKey(p)
	if other, ok := fs.keys[k]; ok {
		return refusedErr("paths %q and %q collide on case-insensitive or normalising file systems", other, p)
	}
	fs.keys[k] = p
	return nil
}

// add stores a file whose path passed checkPath and whose size passed
// reserve.
func (fs *fileSet) add(p string, data []byte) error {
	if isLFSPointer(data) {
		return refusedErr("%q is a Git LFS pointer; the content is not in the repository", p)
	}
	fs.files[p] = data
	fs.total += int64(len(data))
	return nil
}

// checkFiles applies the path rules and limits to files from any source. It
// returns the files that count (hidden ones dropped).
func checkFiles(files map[string][]byte, lim Limits) (map[string][]byte, error) {
	fs := newFileSet(lim.withDefaults())
	for _, p := range slices.Sorted(maps.Keys(files)) {
		data := files[p]
		skip, err := fs.checkPath(p)
		if err != nil {
			return nil, err
		}
		if skip {
			continue
		}
		if err := fs.reserve(p, int64(len(data))); err != nil {
			return nil, err
		}
		if err := fs.add(p, data); err != nil {
			return nil, err
		}
	}
	if _, ok := fs.files[DocumentName]; !ok {
		return nil, fmt.Errorf("no %s at the document's root", DocumentName)
	}
	if err := manifest.Files(fs.files).Check(); err != nil {
		return nil, refusedErr("%v", err)
	}
	return fs.files, nil
}
