// Package atomicfiletest provides a file system for tests that fails one
// step of an atomic write as a crash would, so that a store's test can show
// that every failure leaves the old state or the new one.
package atomicfiletest

import (
	"errors"
	"io/fs"
	"sync"

	"github.com/pkuinfo/harness/internal/atomicfile"
)

// Steps are the steps Fail knows, in the order a write takes them.
var Steps = []string{"create", "chmod", "write", "sync", "close", "rename", "syncdir"}

// ErrInjected is the error of an injected failure.
var ErrInjected = errors.New("injected crash")

// Fail is an atomicfile.FS that fails the step At (one of Steps) of the
// first operation whose file or folder Match accepts (nil: any), and every
// one after it while Once is false. "write" writes half the data first (a
// torn write); "close" closes the file first; "rename" renames nothing.
// Every other operation is the real file system's.
type Fail struct {
	At    string
	Match func(name string) bool
	Once  bool

	mu  sync.Mutex
	hit int
}

// Hits is how many operations failed.
func (f *Fail) Hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hit
}

func (f *Fail) fails(step, name string) bool {
	if step != f.At || (f.Match != nil && !f.Match(name)) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Once && f.hit > 0 {
		return false
	}
	f.hit++
	return true
}

// CreateTemp implements atomicfile.FS; the name matched is dir/pattern.
func (f *Fail) CreateTemp(dir, pattern string) (atomicfile.File, error) {
	if f.fails("create", dir+"/"+pattern) {
		return nil, &fs.PathError{Op: "createtemp", Path: dir + "/" + pattern, Err: ErrInjected}
	}
	file, err := atomicfile.OS.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &failFile{File: file, fs: f}, nil
}

// CreateNew implements atomicfile.FS.
func (f *Fail) CreateNew(name string, perm fs.FileMode) (atomicfile.File, error) {
	if f.fails("create", name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrInjected}
	}
	file, err := atomicfile.OS.CreateNew(name, perm)
	if err != nil {
		return nil, err
	}
	return &failFile{File: file, fs: f}, nil
}

// Rename implements atomicfile.FS; the name matched is newpath.
func (f *Fail) Rename(oldpath, newpath string) error {
	if f.fails("rename", newpath) {
		return &fs.PathError{Op: "rename", Path: newpath, Err: ErrInjected}
	}
	return atomicfile.OS.Rename(oldpath, newpath)
}

// Remove implements atomicfile.FS (it never fails by injection).
func (f *Fail) Remove(name string) error { return atomicfile.OS.Remove(name) }

// SyncDir implements atomicfile.FS.
func (f *Fail) SyncDir(dir string) error {
	if f.fails("syncdir", dir) {
		return &fs.PathError{Op: "sync", Path: dir, Err: ErrInjected}
	}
	return atomicfile.OS.SyncDir(dir)
}

type failFile struct {
	atomicfile.File
	fs *Fail
}

func (f *failFile) Chmod(mode fs.FileMode) error {
	if f.fs.fails("chmod", f.Name()) {
		return &fs.PathError{Op: "chmod", Path: f.Name(), Err: ErrInjected}
	}
	return f.File.Chmod(mode)
}

func (f *failFile) Write(p []byte) (int, error) {
	if f.fs.fails("write", f.Name()) {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: f.Name(), Err: ErrInjected}
	}
	return f.File.Write(p)
}

func (f *failFile) Sync() error {
	if f.fs.fails("sync", f.Name()) {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: ErrInjected}
	}
	return f.File.Sync()
}

func (f *failFile) Close() error {
	if f.fs.fails("close", f.Name()) {
		f.File.Close()
		return &fs.PathError{Op: "close", Path: f.Name(), Err: ErrInjected}
	}
	return f.File.Close()
}
