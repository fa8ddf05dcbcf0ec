// Command harness interprets PKU harness plugin documents: lint, hash, review,
// install, update and run their tools through the credential-signing proxy.
package main

import (
	"os"

	"github.com/pkuinfo/harness/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
