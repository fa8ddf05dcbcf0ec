//go:build unix

package proxy

import (
	"errors"
	"os"
	"syscall"
)

// checkOwner refuses a file that another user owns.
func checkOwner(st os.FileInfo) error {
	if s, ok := st.Sys().(*syscall.Stat_t); ok && int(s.Uid) != os.Getuid() {
		return errors.New("belongs to another user")
	}
	return nil
}

// openNoFollow makes opening a symbolic link fail.
const openNoFollow = syscall.O_NOFOLLOW
