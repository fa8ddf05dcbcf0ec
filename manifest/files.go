package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/text/unicode/norm"
)

// Limits on a document's files, checked before anything is parsed.
const (
	MaxFiles      = 256     // files that count
	MaxFileBytes  = 1 << 20 // one file
	MaxTotalBytes = 4 << 20 // all files
	MaxDepth      = 6       // path components
	MaxPathBytes  = 200     // one path
)

// Files are a document's files that count, by slash path relative to the
// document's root. A single-file document is {"PLUGIN.md": …}.
type Files map[string][]byte

// Names lists the paths sorted.
func (f Files) Names() []string { return slices.Sorted(maps.Keys(f)) }

// Size is the total of the files' bytes.
func (f Files) Size() int {
	n := 0
	for _, b := range f {
		n += len(b)
	}
	return n
}

// Hash is the content hash: dirhash's Hash1 over the files, named by their
// paths with no prefix ("h1:" + base64 of SHA-256 over the sorted
// "sha256  path" lines).
func (f Files) Hash() (string, error) {
	names := f.Names()
	for _, n := range names {
		if strings.Contains(n, "\n") {
			return "", fmt.Errorf("path %q holds a newline", n)
		}
	}
	return dirhash.Hash1(names, func(name string) (io.ReadCloser, error) {
		b, ok := f[name]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	})
}

// Check applies the limits and path rules to a whole set of files (as a
// fetched document is checked before it is stored).
func (f Files) Check() error {
	if len(f) > MaxFiles {
		return fmt.Errorf("the document has %d files, more than the limit of %d", len(f), MaxFiles)
	}
	if _, ok := f["PLUGIN.md"]; !ok {
		return errors.New("the document has no PLUGIN.md at its root")
	}
	total := 0
	folded := make(map[string]string, len(f))
	for _, name := range f.Names() {
		if err := CheckPath(name); err != nil {
			return err
		}
		if len(f[name]) > MaxFileBytes {
			return fmt.Errorf("%s is %d bytes, more than the limit of %d", name, len(f[name]), MaxFileBytes)
		}
		total += len(f[name])
		if total > MaxTotalBytes {
			return fmt.Errorf("the document's files hold more than %d bytes", MaxTotalBytes)
		}
		key := strings.ToLower(norm.NFC.String(name))
		if prev, ok := folded[key]; ok {
			return fmt.Errorf("paths %q and %q differ only in case or Unicode form", prev, name)
		}
		folded[key] = name
	}
	return nil
}

// CheckPath applies the rules for a path that counts: relative, slash
// separated, no empty, "." or ".." components, no hidden components (so no
// ".git" in any case), no backslash, colon or control character, NFC, valid
// UTF-8, at most MaxDepth components and MaxPathBytes bytes.
func CheckPath(p string) error {
	if p == "" || len(p) > MaxPathBytes {
		return fmt.Errorf("path %q is empty or longer than %d bytes", p, MaxPathBytes)
	}
	if !utf8.ValidString(p) || !norm.NFC.IsNormalString(p) {
		return fmt.Errorf("path %q is not valid NFC UTF-8", p)
	}
	parts := strings.Split(p, "/")
	if len(parts) > MaxDepth {
		return fmt.Errorf("path %q is deeper than %d components", p, MaxDepth)
	}
	for _, c := range parts {
		switch {
		case c == "" || c == "." || c == "..":
			return fmt.Errorf("path %q has an empty, . or .. component", p)
		case strings.HasPrefix(c, "."):
			return fmt.Errorf("path %q has a hidden component %q", p, c)
		case strings.EqualFold(strings.TrimRight(c, ". "), "git") || strings.EqualFold(c, "git~1"):
			return fmt.Errorf("path %q has a component that a filesystem may read as .git", p)
		}
		for _, r := range c {
			if r < 0x20 || r == 0x7f || r == '\\' || r == ':' || isInvisible(r) {
				return fmt.Errorf("path %q has a character not allowed in paths (%U)", p, r)
			}
		}
	}
	return nil
}

// counts reports whether a path found in a folder counts as part of the
// document: hidden files and folders (".git", ".DS_Store") do not.
func counts(rel string) bool {
	for _, c := range strings.Split(rel, "/") {
		if strings.HasPrefix(c, ".") {
			return false
		}
	}
	return true
}

// A FileError is a problem with one file of a document: File is its path
// relative to the document (a single file's base name).
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// ReadDir reads a document from disk: a folder (every regular file that
// counts) or a single file (read as PLUGIN.md). Limits are checked before
// reading: a huge file fails fast. Symbolic links and other special files
// are refused.
func ReadDir(p string) (Files, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return nil, &FileError{filepath.Base(p), fmt.Errorf("%s is not a regular file", p)}
		}
		if st.Size() > MaxFileBytes {
			return nil, &FileError{filepath.Base(p), fmt.Errorf("%s is %d bytes, more than the limit of %d", filepath.Base(p), st.Size(), MaxFileBytes)}
		}
		b, err := readLimited(p, MaxFileBytes)
		if err != nil {
			return nil, err
		}
		return Files{"PLUGIN.md": b}, nil
	}
	files := Files{}
	total := 0
	err = filepath.WalkDir(p, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(p, full)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if !counts(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if strings.Count(rel, "/")+1 >= MaxDepth {
				return fmt.Errorf("folder %s is deeper than %d components", rel, MaxDepth-1)
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return &FileError{rel, fmt.Errorf("%s is a symbolic link; documents hold regular files only", rel)}
		}
		if !d.Type().IsRegular() {
			return &FileError{rel, fmt.Errorf("%s is not a regular file", rel)}
		}
		if err := CheckPath(rel); err != nil {
			return &FileError{rel, err}
		}
		if len(files) >= MaxFiles {
			return fmt.Errorf("the document has more than %d files", MaxFiles)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > MaxFileBytes {
			return &FileError{rel, fmt.Errorf("%s is %d bytes, more than the limit of %d", rel, info.Size(), MaxFileBytes)}
		}
		if total += int(info.Size()); total > MaxTotalBytes {
			return fmt.Errorf("the document's files hold more than %d bytes", MaxTotalBytes)
		}
		b, err := readLimited(full, MaxFileBytes)
		if err != nil {
			return err
		}
		files[rel] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, ok := files["PLUGIN.md"]; !ok {
		return nil, fmt.Errorf("%s has no PLUGIN.md", p)
	}
	return files, files.Check()
}

func readLimited(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s grew past %d bytes while read", path.Base(filepath.ToSlash(p)), max)
	}
	return b, nil
}
