// Package atomicfile is the one way the engine writes a file in the home
// folder: a temporary file in the same folder, written, fsynced and closed,
// renamed over the target, then the folder fsynced, so that a crash leaves
// the old file or the new one, never a mix, and a rename that returned
// survives a power cut. OpenRegular is its reading side for files a user
// names: opened without waiting, anything but a regular file refused.
//
// The file operations go through FS, so that a test can make any one of
// them fail as a crash would; production code uses OS.
//
// Where the system cannot open and fsync a folder (Windows, whose
// FlushFileBuffers needs a handle opened for writing, which a folder's is
// not; wasip1 and js, whose runtimes may refuse fd_sync on a folder),
// SyncDir does nothing (DirSync is false): the rename itself is the
// commit there, as in Go's own and bbolt's writers, so the stores work,
// with the old-or-new guarantee and without the folder's flush.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// File is the part of *os.File a write uses.
type File interface {
	Name() string
	Write(p []byte) (int, error)
	Chmod(mode fs.FileMode) error
	Sync() error
	Close() error
}

// FS is the file operations a write uses. OS is the real file system.
type FS interface {
	// CreateTemp creates a new file in dir (os.CreateTemp).
	CreateTemp(dir, pattern string) (File, error)
	// CreateNew creates name, which must not exist, for writing.
	CreateNew(name string, perm fs.FileMode) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	// SyncDir fsyncs the folder dir, so that a rename in it is durable.
	SyncDir(dir string) error
}

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) CreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }

func (osFS) CreateNew(name string, perm fs.FileMode) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) SyncDir(dir string) error             { return SyncDir(dir) }

// TempPattern is the name pattern of the temporary files beside target:
// ".NAME.tmp-*", hidden and named after the file it replaces.
func TempPattern(target string) string { return "." + filepath.Base(target) + ".tmp-*" }

// Write replaces path with data, with mode perm, on the real file system.
func Write(path string, data []byte, perm fs.FileMode) error {
	return WriteFS(OS, path, data, perm)
}

// WriteFS replaces path with data through fsys: a temporary file in path's
// folder (TempPattern), given mode perm, written, fsynced and closed, then
// renamed over path, then the folder fsynced. The folder must exist. On a
// failure before the rename the temporary file is removed and path is
// untouched; a failure of the last fsync leaves the new file in place. The
// errors are the file system's own (*fs.PathError, *os.LinkError).
func WriteFS(fsys FS, path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	f, err := fsys.CreateTemp(dir, TempPattern(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := writeAll(f, data, perm); err != nil {
		f.Close()
		fsys.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		fsys.Remove(tmp)
		return err
	}
	if err := fsys.Rename(tmp, path); err != nil {
		fsys.Remove(tmp)
		return err
	}
	return fsys.SyncDir(dir)
}

func writeAll(f File, data []byte, perm fs.FileMode) error {
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}

// CreateFS writes a new file name (which must not exist) with data and mode
// perm through fsys, and fsyncs it; the caller syncs its folder. On a
// failure the file may be left partly written: create it inside a
// temporary folder that is renamed into place once every file is synced.
func CreateFS(fsys FS, name string, data []byte, perm fs.FileMode) error {
	f, err := fsys.CreateNew(name, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
