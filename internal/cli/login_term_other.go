//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cli

import (
	"errors"
	"os"
)

// noEcho cannot turn echo off here: a terminal is refused (pipe the value
// on stdin instead); ok is false for anything else.
func noEcho(f *os.File, fn func() error) (bool, error) {
	if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		return true, errors.New("this system's terminal echo cannot be turned off: give the value on stdin (a pipe)")
	}
	return false, nil
}
