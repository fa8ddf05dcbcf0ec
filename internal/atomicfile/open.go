package atomicfile

import (
	"errors"
	"os"
)

// ErrNotRegular is OpenRegular's error for a path that is not a regular
// file.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path for reading, refusing anything but a regular
// file. It opens without waiting (openNoWait: a named pipe opened for
// reading otherwise waits for a writer, for ever) and checks the file it
// opened, so a path swapped for a pipe between a check and the open
// cannot hold the caller either; a device (/dev/zero never ends) is
// refused the same way. The error is the open's or the stat's
// (*os.PathError), or ErrNotRegular.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoWait, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, ErrNotRegular
	}
	return f, nil
}
