package fetch

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The git client's redirect rule: within the first request's origin only
// (netguard.SameOrigin: letter case and the default port are one origin),
// never to a URL with a user name, at most maxRedirects. Decided by the
// client's own CheckRedirect, with nothing sent.
func TestGitClientRedirectRule(t *testing.T) {
	c := gitClient(0)
	req := func(s string) *http.Request {
		u, err := url.Parse(s)
		require.NoError(t, err)
		return &http.Request{URL: u}
	}
	first := []*http.Request{req("https://github.com/a/b.git/info/refs?service=git-upload-pack")}
	for _, ok := range []string{
		"https://github.com/a/renamed.git/info/refs?service=git-upload-pack",
		"https://GitHub.com/a/b.git/info/refs",
		"https://github.com:443/a/b.git/info/refs",
	} {
		assert.NoError(t, c.CheckRedirect(req(ok), first), ok)
	}
	for _, bad := range []string{
		"http://github.com/a/b.git/info/refs",
		"https://github.com:8443/a/b.git/info/refs",
		"https://codeload.github.com/a/b.git/info/refs",
		"https://evil.example/a/b.git/info/refs",
		"https://x@github.com/a/b.git/info/refs",
		"https://x:y@github.com/a/b.git/info/refs",
	} {
		assert.ErrorIs(t, c.CheckRedirect(req(bad), first), ErrRedirect, bad)
	}
	loop := []*http.Request{req("http://127.0.0.1:9418/a/b.git/info/refs")}
	assert.NoError(t, c.CheckRedirect(req("http://127.0.0.1:9418/c/d.git/info/refs"), loop))
	assert.ErrorIs(t, c.CheckRedirect(req("http://127.0.0.1:9419/a/b.git/info/refs"), loop), ErrRedirect)
	assert.ErrorIs(t, c.CheckRedirect(req("http://localhost:9418/a/b.git/info/refs"), loop), ErrRedirect, "another host name is another origin")

	many := make([]*http.Request, maxRedirects)
	for i := range many {
		many[i] = first[0]
	}
	assert.ErrorIs(t, c.CheckRedirect(req("https://github.com/a/b.git/info/refs"), many), ErrRedirect)
	assert.NoError(t, c.CheckRedirect(req("https://github.com/a/b.git/info/refs"), many[:maxRedirects-1]))
}
