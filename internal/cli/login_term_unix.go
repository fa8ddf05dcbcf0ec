//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// noEcho turns the terminal's echo off while fn reads; ok is false when f
// is not a terminal (fn is not called).
func noEcho(f *os.File, fn func() error) (ok bool, err error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return false, nil
	}
	t := *old
	t.Lflag &^= unix.ECHO
	t.Lflag |= unix.ICANON | unix.ISIG
	t.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &t); err != nil {
		return true, err
	}
	defer unix.IoctlSetTermios(fd, ioctlSetTermios, old)
	return true, fn()
}
