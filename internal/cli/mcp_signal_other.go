//go:build wasip1 || js || plan9

package cli

import "os"

// shutdownSignal ends harness mcp --http: only an interrupt here.
var shutdownSignal = os.Interrupt
