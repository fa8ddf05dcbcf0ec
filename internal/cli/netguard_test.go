package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// closedGitBase is the HARNESS_GIT_BASE the tests' commands get unless a
// test gives its own: a loopback port nothing listens on (binding port 1
// takes root), so a GitHub link a test did not serve (a bundled document's,
// checked by harness update) fails at once, on loopback, and never reaches
// github.com.
const closedGitBase = "http://127.0.0.1:1"

// testGetenv is the environment of the tests' commands: env, with
// HARNESS_GIT_BASE set to closedGitBase unless env names it (an empty value
// stays empty).
func testGetenv(env map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "HARNESS_GIT_BASE" {
			return closedGitBase
		}
		return ""
	}
}

// dialGuard records every connection the default HTTP transport (the git
// client's) opens during this package's tests, and refuses, before any
// name is resolved or any packet sent, one to an address that is not
// loopback.
var dialGuard struct {
	sync.Mutex
	dials   []string // every address asked for
	refused []string // the ones refused
}

func guardedDial(next func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialGuard.Lock()
		dialGuard.dials = append(dialGuard.dials, addr)
		host, _, err := net.SplitHostPort(addr)
		ip, perr := netip.ParseAddr(host)
		ok := err == nil && (strings.EqualFold(host, "localhost") || (perr == nil && ip.IsLoopback()))
		if !ok {
			dialGuard.refused = append(dialGuard.refused, addr)
		}
		dialGuard.Unlock()
		if !ok {
			return nil, fmt.Errorf("test network guard: %s is not a loopback address: refused", addr)
		}
		return next(ctx, network, addr)
	}
}

// guardLog returns the addresses asked for and refused since the last call,
// and forgets them.
func guardLog() (dials, refused []string) {
	dialGuard.Lock()
	defer dialGuard.Unlock()
	dials, refused = dialGuard.dials, dialGuard.refused
	dialGuard.dials, dialGuard.refused = nil, nil
	return dials, refused
}

// TestMain puts the guard in the default transport (no proxy from the
// environment either: a proxy is another host) and fails the package when
// any test asked for a non-loopback address.
func TestMain(m *testing.M) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	d := &net.Dialer{}
	tr.DialContext = guardedDial(d.DialContext)
	http.DefaultTransport = tr
	code := m.Run()
	dialGuard.Lock()
	refused := slices.Clone(dialGuard.refused)
	dialGuard.Unlock()
	if len(refused) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: tests asked for non-loopback addresses (refused by the test network guard): %v\n", refused)
		code = 1
	}
	os.Exit(code)
}
