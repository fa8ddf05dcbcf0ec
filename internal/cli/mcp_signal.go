//go:build !wasip1 && !js && !plan9

package cli

import "syscall"

// shutdownSignal ends harness mcp --http, besides an interrupt.
var shutdownSignal = syscall.SIGTERM
