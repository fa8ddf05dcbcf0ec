package fetch

import (
	"errors"
	"net/netip"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLinkAccepted(t *testing.T) {
	cases := []struct {
		in      string
		kind    Kind
		owner   string
		repo    string
		refPath string
		blob    bool
		canon   string
	}{
		{"https://github.com/pkuinfo/pku-harness-plugins/tree/main/canteen", KindGitHub, "pkuinfo", "pku-harness-plugins", "main/canteen", false, ""},
		{"https://github.com/pkuinfo/pku-harness-plugins/tree/main/canteen/", KindGitHub, "pkuinfo", "pku-harness-plugins", "main/canteen", false, "https://github.com/pkuinfo/pku-harness-plugins/tree/main/canteen"},
		{"https://github.com/a/b/tree/feature/x/plugins/one", KindGitHub, "a", "b", "feature/x/plugins/one", false, ""},
		{"https://github.com/a/b/tree/v1.2.0", KindGitHub, "a", "b", "v1.2.0", false, ""},
		{"https://GitHub.com/a-b/c.d_e/blob/main/x/PLUGIN.md", KindGitHub, "a-b", "c.d_e", "main/x", true, "https://github.com/a-b/c.d_e/blob/main/x/PLUGIN.md"},
		{"https://github.com/a/b/blob/0123456789abcdef0123456789abcdef01234567/PLUGIN.md", KindGitHub, "a", "b", "0123456789abcdef0123456789abcdef01234567", true, ""},
		{"https://github.com/a/b", KindGitHub, "a", "b", "", false, ""},
		{"https://github.com/a/b/tree/main/%E9%A3%9F%E5%A0%82", KindGitHub, "a", "b", "main/食堂", false, ""},
		{"https://www.github.com/a/.github/tree/main/p", KindGitHub, "a", ".github", "main/p", false, "https://github.com/a/.github/tree/main/p"},
		{"https://raw.githubusercontent.com/a/b/main/x/PLUGIN.md", KindURL, "", "", "", false, ""},
		{"https://example.edu.cn:8443/plugins/PLUGIN.md?v=2", KindURL, "", "", "", false, ""},
		{"https://example.edu.cn/PLUGIN.md#top", KindURL, "", "", "", false, "https://example.edu.cn/PLUGIN.md"},
		{"http://127.0.0.1:8080/p/PLUGIN.md", KindURL, "", "", "", false, ""},
		{"http://[::1]:8080/PLUGIN.md", KindURL, "", "", "", false, ""},
		{"http://localhost/PLUGIN.md", KindURL, "", "", "", false, ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			l, err := ParseLink(c.in)
			require.NoError(t, err)
			assert.Equal(t, c.kind, l.Kind)
			assert.Equal(t, c.owner, l.Owner)
			assert.Equal(t, c.repo, l.Repo)
			assert.Equal(t, c.refPath, l.RefPath)
			assert.Equal(t, c.blob, l.Blob)
			want := c.canon
			if want == "" {
				want = c.in
			}
			assert.Equal(t, want, l.String())
			// The canonical spelling parses to the same link.
			l2, err := ParseLink(l.String())
			require.NoError(t, err)
			assert.Equal(t, l.String(), l2.String())
		})
	}
}

func TestParseLinkLocal(t *testing.T) {
	for _, in := range []string{"./canteen", "canteen/PLUGIN.md", "/tmp/x", "../up"} {
		l, err := ParseLink(in)
		require.NoError(t, err, in)
		assert.Equal(t, KindLocal, l.Kind)
		abs, _ := filepath.Abs(in)
		assert.Equal(t, abs, l.Path)
	}
}

func TestParseLinkRefused(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://github.com.evil/a/b/tree/main/x", "is not github.com"},
		{"https://github.com.evil.com/a/b/blob/main/PLUGIN.md", "is not github.com"},
		{"https://github.com@evil.com/a/b/tree/main/x", "user name or password"},
		{"https://user:pw@github.com/a/b/tree/main/x", "user name or password"},
		{"https://github.com:443/a/b/tree/main/x", "a port"},
		{"https://github.com:/a/b/tree/main/x", "a port"},
		{"http://github.com/a/b/tree/main/x", "must use https"},
		{"https://github.com/../b/tree/main/x", "'.' and '..'"},
		{"https://github.com/a/../tree/main/x", "'.' and '..'"},
		{"https://github.com/%2e%2e/b/tree/main/x", "encoded"},
		{"https://github.com/a/b/tree/main/%2e%2e/x", "encoded"},
		{"https://github.com/a/b/tree/main/a%2Fb", "encoded"},
		{"https://github.com/a/b/tree/main/a%5cb", "encoded"},
		{"https://github.com/a/b/tree/main/x/../../c", "'.' and '..'"},
		{"https://github.com/a/b/tree/main//x", "empty segment"},
		{"https://github.com/a/b/tree/main/x?ref=evil", "a query"},
		{"https://github.com/a/b/tree/main/x#frag", "a fragment"},
		{"https://github.com/-a/b/tree/main/x", "owner"},
		{"https://github.com/a_b/b/tree/main/x", "owner"},
		{"https://github.com/a/b.git/tree/main/x", "repository"},
		{"https://github.com/a/b c/tree/main/x", "repository"},
		{"https://github.com/a/b/tree", "expected https://github.com/OWNER/REPO/tree/REF/PATH"},
		{"https://github.com/a/b/blob/main/README.md", "must name a PLUGIN.md"},
		{"https://github.com/a/b/commits/main", "expected https://github.com/OWNER/REPO/tree/REF/PATH"},
		{"https://github.com/a", "no OWNER/REPO"},
		{"github.com/a/b/tree/main/x", "has no scheme"},
		{"ftp://example.com/PLUGIN.md", "scheme \"ftp\""},
		{"file:///etc/PLUGIN.md", "scheme \"file\""},
		{"http://example.com/PLUGIN.md", "plain http is accepted only for a loopback"},
		{"https://example.com/README.md", "ending in /PLUGIN.md"},
		{"https://example.com/plugin.md", "ending in /PLUGIN.md"},
		{"https://10.0.0.1/PLUGIN.md", "not a public address"},
		{"https://169.254.169.254/PLUGIN.md", "not a public address"},
		{"https://[fd00::1]/PLUGIN.md", "not a public address"},
		{"https://example.com/a/%2f/PLUGIN.md", "encoded"},
		{"https://example.com/a/../PLUGIN.md", "'.' and '..'"},
		{"https://example.com:0/PLUGIN.md", "bad port"},
		{" https://example.com/PLUGIN.md", "spaces"},
		{"https://example.com/\x01PLUGIN.md", "control character"},
		{"canteen\u202edm.NIGULP", "bidirectional"},
		{"https://github.com/a/b/tree/main/p\u2066", "bidirectional"},
		{"https://example.com/a\u2028/PLUGIN.md", "line-separator"},
		{"", "empty"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			_, err := ParseLink(c.in)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrLink))
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestCloneURL(t *testing.T) {
	l, err := ParseLink("https://github.com/a/b/tree/main/x")
	require.NoError(t, err)
	u, err := l.CloneURL("")
	require.NoError(t, err)
	assert.Equal(t, "https://github.com/a/b.git", u)
	u, err = l.CloneURL("http://127.0.0.1:9999/git/")
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:9999/git/a/b.git", u)
	_, err = l.CloneURL("http://example.com")
	assert.ErrorContains(t, err, "only for a loopback")
	_, err = l.CloneURL("ssh://x")
	assert.ErrorContains(t, err, "expected an http(s) URL")
}

func TestTrust(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/pkuinfo/pku-harness-plugins/tree/main/canteen":               TrustOfficial,
		"https://github.com/PKUinfo/pku-harness-plugins/tree/main/canteen":               TrustOfficial,
		"https://github.com/pkuinfo/pku-harness-plugins-fork/tree/main/x":                TrustCommunity,
		"https://github.com/evil/pku-harness-plugins/tree/main/x":                        TrustCommunity,
		"https://raw.githubusercontent.com/pkuinfo/pku-harness-plugins/main/x/PLUGIN.md": TrustCommunity,
	} {
		l, err := ParseLink(in)
		require.NoError(t, err)
		assert.Equal(t, want, l.Trust(), in)
	}
}

func TestCheckRedirect(t *testing.T) {
	mu := func(s string) *url.URL { u, err := url.Parse(s); require.NoError(t, err); return u }
	loop := mu("http://127.0.0.1:8080/a/PLUGIN.md")
	assert.NoError(t, CheckRedirect(loop, mu("http://127.0.0.1:8080/b/PLUGIN.md")))
	assert.ErrorIs(t, CheckRedirect(loop, mu("http://127.0.0.1:8081/b/PLUGIN.md")), ErrRedirect)
	assert.ErrorIs(t, CheckRedirect(loop, mu("https://example.com/PLUGIN.md")), ErrRedirect)
	pub := mu("https://example.com/PLUGIN.md")
	assert.NoError(t, CheckRedirect(pub, mu("https://cdn.example.com/PLUGIN.md")))
	for _, bad := range []string{
		"http://cdn.example.com/PLUGIN.md", "https://127.0.0.1/PLUGIN.md", "https://localhost/PLUGIN.md",
		"https://10.1.2.3/PLUGIN.md", "https://192.168.0.1/x", "https://[::1]/x", "https://[fe80::1]/x",
		"https://169.254.169.254/latest", "https://0.0.0.0/x", "https://[::ffff:10.0.0.1]/x",
		"https://u@cdn.example.com/x",
	} {
		assert.ErrorIs(t, CheckRedirect(pub, mu(bad)), ErrRedirect, bad)
	}
}

func TestDeniedAddr(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "::1", "fc00::1", "fe80::1", "100.64.0.1", "0.0.0.0", "224.0.0.1", "::ffff:192.168.1.1",
		// The campus network, as the proxy refuses it (it used to pass).
		"162.105.129.122", "::ffff:162.105.129.122"} {
		assert.Error(t, DeniedAddr(netip.MustParseAddr(s)), s)
	}
	for _, s := range []string{"8.8.8.8", "162.104.129.122", "2001:4860:4860::8888"} {
		assert.NoError(t, DeniedAddr(netip.MustParseAddr(s)), s)
	}
}
