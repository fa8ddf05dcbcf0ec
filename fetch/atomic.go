package fetch

import (
	"os"
	"path/filepath"
)

// failStep, when set (by tests), is called at each step of an atomic write
// and makes the write fail there, as a crash would.
var failStep func(step string) error

func step(name string) error {
	if failStep != nil {
		return failStep(name)
	}
	return nil
}

// writeFileAtomic replaces path with data: a temporary file in the same
// folder, written, synced and closed, then renamed over path, then the folder
// synced. A failure at any step leaves the old file or the new one.
func writeFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := step("create"); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	half := len(data) / 2
	if _, err := f.Write(data[:half]); err != nil {
		return err
	}
	if err := step("write"); err != nil {
		return err
	}
	if _, err := f.Write(data[half:]); err != nil {
		return err
	}
	if err := step("sync"); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := step("close"); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := step("rename"); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	renamed = true
	if err := step("syncdir"); err != nil {
		return err
	}
	return syncDir(dir)
}

// writeFileSynced writes a new file and syncs it.
func writeFileSynced(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
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

// syncDir syncs a folder so a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
