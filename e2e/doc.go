// Package e2e holds the end-to-end tests of the command-line contract: they
// build harness exactly as CONTRACT.md says (go build -o bin/harness
// ./cmd/harness) and drive the binary with its flags, files, environment and
// exit codes, against real loopback servers, so a drift from the contract
// fails here first.
package e2e
