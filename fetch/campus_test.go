package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/pkuinfo/harness/internal/netguard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingTransport counts the requests it is asked to send and sends
// none.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("no network in this test")
}

// The URL fetcher (install, review, daily update) follows the campus rule
// of the proxy: it is never sent to a campus host, whichever client it
// was given, and nothing leaves.
func TestURLDocumentNeverFetchedFromCampus(t *testing.T) {
	tr := &countingTransport{}
	opt := URLOptions{Client: &http.Client{Transport: tr}}
	for _, link := range []string{
		"https://portal.pku.edu.cn/x/PLUGIN.md", "https://PKU.EDU.CN/PLUGIN.md", "https://a.b.pku.edu.cn/PLUGIN.md",
	} {
		l, err := ParseLink(link)
		require.NoError(t, err, link)
		_, err = FetchURL(context.Background(), l, opt)
		require.Error(t, err, link)
		assert.Contains(t, err.Error(), "campus", link)
		_, _, err = CheckURL(context.Background(), l, `"e"`, "", opt)
		require.Error(t, err, link)
	}
	assert.Equal(t, int64(0), tr.n.Load(), "nothing was sent")
	// An address of the campus network is refused as a link already.
	_, err := ParseLink("https://162.105.3.4/PLUGIN.md")
	require.Error(t, err)
	// A host's extended campus networks count too.
	nets, err := netguard.ParseNetworks([]string{"115.27.0.0/16"})
	require.NoError(t, err)
	l, err := ParseLink("https://115.27.0.9/PLUGIN.md")
	require.NoError(t, err)
	_, err = FetchURL(context.Background(), l, URLOptions{Client: &http.Client{Transport: tr}, Guard: netguard.New(nets...)})
	require.ErrorContains(t, err, "campus")
	assert.Equal(t, int64(0), tr.n.Load())
}

// It is never redirected to a campus host or address either, and its
// dialer refuses a campus address a public name resolves to. Decisions
// only: nothing is dialled.
func TestURLDocumentNeverRedirectedToCampus(t *testing.T) {
	mu := func(s string) *url.URL { u, err := url.Parse(s); require.NoError(t, err); return u }
	pub := mu("https://example.com/PLUGIN.md")
	for _, bad := range []string{"https://its.pku.edu.cn/PLUGIN.md", "https://pku.edu.cn/x", "https://PORTAL.PKU.EDU.CN./x",
		"https://162.105.1.1/PLUGIN.md", "https://[::ffff:162.105.1.1]/PLUGIN.md"} {
		assert.ErrorIs(t, CheckRedirect(pub, mu(bad)), ErrRedirect, bad)
	}
	assert.NoError(t, CheckRedirect(pub, mu("https://pku.edu.cn.example.com/PLUGIN.md")))
	g := netguard.New(netip.MustParsePrefix("115.27.0.0/16"))
	assert.ErrorIs(t, checkRedirect(g, pub, mu("https://115.27.1.1/PLUGIN.md")), ErrRedirect)
	for _, a := range []string{"162.105.1.1:443", "[::ffff:162.105.1.1]:443", "10.0.0.1:443"} {
		assert.Error(t, dialDecision(netguard.Default, false, a), a)
	}
	assert.Error(t, dialDecision(g, false, "115.27.1.1:443"))
	assert.NoError(t, dialDecision(netguard.Default, false, "1.1.1.1:443"))
	assert.NoError(t, dialDecision(netguard.Default, true, "127.0.0.1:8080"))
	assert.Error(t, dialDecision(netguard.Default, true, "1.1.1.1:443"))
}
