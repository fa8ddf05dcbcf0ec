//go:build unix

package atomicfile

import "syscall"

// openNoWait makes an open return at once where it would wait (a named
// pipe without a writer); a regular file reads as usual.
const openNoWait = syscall.O_NONBLOCK
