//go:build !windows && !wasip1 && !js

package atomicfile

import "os"

// DirSync reports whether SyncDir fsyncs a folder on this system.
const DirSync = true

// SyncDir fsyncs the folder dir, so that a rename or a new file in it
// survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
