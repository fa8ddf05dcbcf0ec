//go:build !unix

package atomicfile

// openNoWait is none where the system has no O_NONBLOCK; OpenRegular still
// refuses what is not a regular file once it is open.
const openNoWait = 0
