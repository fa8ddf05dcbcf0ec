package cli

import (
	"testing"

	"github.com/pkuinfo/harness/proxy"
)

// builtinWithHeader names a built-in service whose session uses a header.
func builtinWithHeader(t *testing.T) string {
	for _, name := range proxy.Builtin().Names() {
		s := proxy.Builtin()[name]
		if len(s.Auth.Headers) > 0 || s.CSRF.Header != "" {
			return name
		}
	}
	t.Skip("no built-in service uses a session header")
	return ""
}

func builtinHeader(t *testing.T) string {
	s := proxy.Builtin()[builtinWithHeader(t)]
	if len(s.Auth.Headers) > 0 {
		return s.Auth.Headers[0]
	}
	return s.CSRF.Header
}
