package netguard

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The decisions are checked on addresses and names alone: nothing here
// resolves or dials.
func TestCheckAddr(t *testing.T) {
	refused := []string{
		"127.0.0.1", "0.0.0.0", "10.0.0.1", "172.16.0.1", "192.168.0.1", "169.254.169.254", "100.64.0.1",
		"224.0.0.1", "255.255.255.255", "::1", "::", "fc00::1", "fe80::1", "::ffff:10.0.0.1", "64:ff9b::a00:1",
		"2001:db8::1", "162.105.129.1", "162.105.0.1", "::ffff:162.105.3.4",
	}
	for _, s := range refused {
		require.ErrorIs(t, Default.CheckAddr(netip.MustParseAddr(s)), ErrDenied, s)
	}
	for _, s := range []string{"1.1.1.1", "162.104.255.255", "162.106.0.1", "2001:4860:4860::8888", "115.27.1.1"} {
		require.NoError(t, Default.CheckAddr(netip.MustParseAddr(s)), s)
	}
	require.ErrorIs(t, Default.CheckAddr(netip.Addr{}), ErrDenied)
}

// A host's catalogue extends the campus networks; it never removes the
// default block.
func TestCampusNetworksExtend(t *testing.T) {
	nets, err := ParseNetworks([]string{"115.27.0.0/16", "2001:da8:201::/48", " 222.29.0.0/17 "})
	require.NoError(t, err)
	g := New(nets...)
	for _, s := range []string{"115.27.1.1", "2001:da8:201::5", "222.29.1.2", "::ffff:115.27.0.9", "162.105.1.1"} {
		assert.True(t, g.IsCampusAddr(netip.MustParseAddr(s)), s)
		require.ErrorIs(t, g.CheckAddr(netip.MustParseAddr(s)), ErrDenied, s)
	}
	require.NoError(t, g.CheckAddr(netip.MustParseAddr("222.29.200.1")))
	assert.Len(t, New(netip.MustParsePrefix("162.105.0.0/16")).CampusNetworks(), 1, "no duplicate")
	for _, bad := range []string{"162.105.0.0", "x/16", "fe80::/10%eth0", "1.2.3.4/33"} {
		_, err := ParseNetworks([]string{bad})
		require.Error(t, err, bad)
	}
}

func TestCheckHost(t *testing.T) {
	for _, h := range []string{"pku.edu.cn", "portal.pku.edu.cn", "PORTAL.PKU.EDU.CN.", "162.105.3.4", "[::ffff:162.105.3.4]", "10.1.1.1", "127.0.0.1"} {
		require.ErrorIs(t, Default.CheckHost(h, false), ErrDenied, h)
	}
	require.NoError(t, Default.CheckHost("127.0.0.1", true))
	require.NoError(t, Default.CheckHost("[::1]", true))
	require.ErrorIs(t, Default.CheckHost("162.105.3.4", true), ErrDenied)
	for _, h := range []string{"example.com", "notpku.edu.cn", "pku.edu.cn.example.com", "1.1.1.1"} {
		require.NoError(t, Default.CheckHost(h, false), h)
	}
}

func TestCanonicalHost(t *testing.T) {
	good := map[string]string{
		"Example.COM": "example.com", "1.2.3.4": "1.2.3.4", "::1": "::1", "0:0::1": "::1",
		"北大.cn": "xn--djry4l.cn", "a-b_c.d": "a-b_c.d", "v1.example.com": "v1.example.com",
		"1e100.net": "1e100.net",
	}
	for in, want := range good {
		got, err := CanonicalHost(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "2130706433", "0x7f.1", "127.1", "017.0.0.1", "127.0.0.01", "0x7f000001",
		"1.2.3", "example.com.", "a..b", "fe80::1%eth0", "exa mple.com", "a/b", "1.2.3.4.5", "foo.0x10", "foo.123"} {
		_, err := CanonicalHost(in)
		require.Error(t, err, in)
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for _, h := range []string{"localhost", "LOCALHOST.", "127.0.0.1", "127.9.9.9", "[::1]", "::1", "::ffff:127.0.0.1"} {
		assert.True(t, IsLoopbackHost(h), h)
	}
	for _, h := range []string{"localhost.example.com", "10.0.0.1", "example.com", "", "[::2]"} {
		assert.False(t, IsLoopbackHost(h), h)
	}
}

func TestParseResolveFlag(t *testing.T) {
	for in, want := range map[string][2]string{
		"news.example.edu.cn:80:127.0.0.1":       {"news.example.edu.cn:80", "127.0.0.1:80"},
		"News.Example.edu.cn:443:127.0.0.1:8443": {"news.example.edu.cn:443", "127.0.0.1:8443"},
		"a.example:80:[::1]":                     {"a.example:80", "[::1]:80"},
		"a.example:80:::1":                       {"a.example:80", "[::1]:80"},
		"a.example:80:[::1]:9000":                {"a.example:80", "[::1]:9000"},
		"[::1]:8080:127.0.0.1":                   {"[::1]:8080", "127.0.0.1:8080"},
	} {
		k, v, err := ParseResolveFlag(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, [2]string{k, v}, in)
	}
	for _, in := range []string{"", "a.example", "a.example:80", "a.example:x:127.0.0.1", "a.example:80:localhost", "2130706433:80:127.0.0.1", "a.example:0:127.0.0.1"} {
		_, _, err := ParseResolveFlag(in)
		require.Error(t, err, in)
	}
	m, err := ParseResolveFlags([]string{"a.example:80:127.0.0.1", "b.example:443:127.0.0.1:8443"})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a.example:80": "127.0.0.1:80", "b.example:443": "127.0.0.1:8443"}, m)
	m, err = ParseResolveFlags(nil)
	require.NoError(t, err)
	assert.Nil(t, m)
	_, err = ParseResolveFlags([]string{"a.example:80:127.0.0.1", "bad"})
	require.ErrorContains(t, err, "HOST:PORT:ADDR")
}

// Request headers by allow-list, names compared after folding "_" to "-"
// and letter case.
func TestCheckStepHeader(t *testing.T) {
	for in, want := range map[string]string{"accept": "Accept", "ACCEPT-LANGUAGE": "Accept-Language",
		"x_requested_with": "X-Requested-With", "If-None-Match": "If-None-Match", "content_type": "Content-Type",
		"Referer": "Referer"} {
		got, err := CheckStepHeader(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got)
	}
	for _, in := range []string{"X_Forwarded_For", "X_Original_URL", "X_Real_IP", "Remote-User", "CAS-User", "remote_user",
		"Cookie", "Authorization", "Host", "X-Forwarded-For", "Forwarded", "X-Custom", "Accept-Encoding", "Content-Length",
		"Transfer-Encoding", "X-Auth-User", "X-Remote-User", "Proxy-Authorization", "Synjones-Auth", "uuid"} {
		_, err := CheckStepHeader(in)
		require.Error(t, err, in)
		if stackHeaders[FoldHeaderName(in)] {
			assert.Contains(t, err.Error(), "set by the proxy or the HTTP stack", in)
		} else {
			assert.Contains(t, err.Error(), "a step sets only Accept", in)
		}
	}
}

// A sealed host connects to loopback literals only; everything else is
// refused by the decision alone, names included (no lookup is made).
func TestCheckSealedDial(t *testing.T) {
	for _, a := range []string{"127.0.0.1:443", "127.9.9.9:8080", "[::1]:443", "[::ffff:127.0.0.1]:80"} {
		require.NoError(t, CheckSealedDial(a), a)
	}
	for _, a := range []string{
		"192.0.2.1:443",   // TEST-NET-1: cannot route
		"198.51.100.7:80", // TEST-NET-2
		"162.105.129.1:443", "10.0.0.1:443", "1.1.1.1:443", "[2001:db8::1]:443", "[fe80::1%eth0]:443",
		"www.lib.pku.edu.cn:443", "localhost:443", "127.0.0.1", "127.0.0.1:0", "",
	} {
		err := CheckSealedDial(a)
		require.ErrorIs(t, err, ErrDenied, a)
		assert.Contains(t, err.Error(), "loopback", a)
	}
}
