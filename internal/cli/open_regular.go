package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/pkuinfo/harness/internal/atomicfile"
)

// openRegular opens a file a flag names for reading, refusing anything but
// a regular file at once (atomicfile.OpenRegular: a named pipe or a device
// never holds the command).
func openRegular(flag, path string) (*os.File, error) {
	f, err := atomicfile.OpenRegular(path)
	if errors.Is(err, atomicfile.ErrNotRegular) {
		return nil, fmt.Errorf("%s %s is not a regular file", flag, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flag, err)
	}
	return f, nil
}
