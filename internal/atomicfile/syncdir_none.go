//go:build windows || wasip1 || js

package atomicfile

// DirSync reports whether SyncDir fsyncs a folder on this system: not on
// Windows (a folder's handle cannot be flushed: FlushFileBuffers answers
// "Access is denied"), wasip1 or js (a runtime may refuse fd_sync on a
// folder, or offer no folder handle at all).
const DirSync = false

// SyncDir does nothing here (DirSync is false) and returns nil: a rename
// is as durable as the system makes it, and the write still leaves the old
// file or the new one.
func SyncDir(dir string) error { return nil }
