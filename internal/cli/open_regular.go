package cli

import (
	"fmt"
	"os"
)

// openRegular opens a file a flag names for reading, refusing anything but
// a regular file. It opens without waiting (openNoWait: a named pipe opened
// for reading otherwise waits for a writer, for ever) and checks the file
// it opened, so a path swapped for a pipe between a check and the open
// cannot hold the command either; a device (/dev/zero never ends) is
// refused the same way.
func openRegular(flag, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoWait, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flag, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %v", flag, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s %s is not a regular file", flag, path)
	}
	return f, nil
}
