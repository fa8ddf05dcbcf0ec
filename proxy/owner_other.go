//go:build !unix

package proxy

import "os"

// checkOwner is a no-op where file ownership is not a uid.
func checkOwner(os.FileInfo) error { return nil }

// openNoFollow is 0 where the flag does not exist; the keystore's Lstat
// check still refuses a link.
const openNoFollow = 0
