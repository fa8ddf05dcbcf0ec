//go:build !unix

package cli

// openNoWait is none where the system has no O_NONBLOCK; openRegular still
// refuses what is not a regular file once it is open.
const openNoWait = 0
