package proxy

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Request headers go by allow-list at run time too (a host that builds
// requests itself, a name a template made): names are compared after
// folding "_" to "-" and case, and everything off the list is refused
// with a clear message before anything is sent.
func TestStepHeadersByAllowList(t *testing.T) {
	card := newRecorder(t, echo)
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card"))
	ctx := context.Background()
	for _, h := range []string{"X_Forwarded_For", "X_Original_URL", "X_Real_IP", "Remote-User", "CAS-User", "remote_user",
		"cas_user", "X-Custom", "X-Auth-Request-User", "Synjones_Auth"} {
		_, err := call.Do(ctx, &Request{Service: "card", Path: "/a", Header: http.Header{h: {"x"}}})
		require.ErrorIs(t, err, ErrRefused, h)
		assert.Contains(t, err.Error(), "a step sets only Accept", h)
	}
	for _, h := range []string{"Accept_Encoding", "content_length", "COOKIE", "proxy_authorization"} {
		_, err := call.Do(ctx, &Request{Service: "card", Path: "/a", Header: http.Header{h: {"x"}}})
		require.ErrorIs(t, err, ErrRefused, h)
		assert.Contains(t, err.Error(), "set by the proxy or the HTTP stack", h)
	}
	assert.Equal(t, int64(0), card.n.Load(), "nothing was sent")

	_, err := call.Do(ctx, &Request{Service: "card", Path: "/a", Header: http.Header{"x_requested_with": {"XMLHttpRequest"},
		"accept_language": {"zh-CN"}, "IF_NONE_MATCH": {`"e1"`}}})
	require.NoError(t, err)
	h := card.Hits()[0].Header
	assert.Equal(t, "XMLHttpRequest", h.Get("X-Requested-With"))
	assert.Equal(t, "zh-CN", h.Get("Accept-Language"))
	assert.Equal(t, `"e1"`, h.Get("If-None-Match"))
	for k := range h {
		assert.NotContains(t, k, "_", "names go out folded")
	}
}

// Referer and Origin only for the request's own origin: a campus request
// may name its service's origin or a campus host; a web request only its
// own origin.
func TestRefererWithinTheOrigin(t *testing.T) {
	card := newRecorder(t, nil)
	web := newRecorder(t, nil)
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	p.resolve["news.example.com:80"] = web.Listener.Addr().String()
	acc := access("card")
	acc.Web = []manifest.Origin{webOrigin("http", "news.example.com", 80)}
	call := p.NewCall("demo", acc)
	ctx := context.Background()
	for _, ref := range []string{card.URL + "/page", "https://bdcard.pku.edu.cn/plat/", "https://portal.pku.edu.cn/publicQuery/"} {
		_, err := call.Do(ctx, &Request{Service: "card", Path: "/a", Header: http.Header{"Referer": {ref}}})
		require.NoError(t, err, ref)
	}
	_, err := call.Do(ctx, &Request{URL: "http://news.example.com/x", Header: http.Header{"Referer": {"http://news.example.com/list"}, "Origin": {"http://news.example.com"}}})
	require.NoError(t, err)
	n := card.n.Load() + web.n.Load()
	for _, r := range []*Request{
		{Service: "card", Path: "/a", Header: http.Header{"Referer": {"https://evil.example.com/"}}},
		{Service: "card", Path: "/a", Header: http.Header{"Origin": {"https://evil.example.com"}}},
		{Service: "card", Path: "/a", Header: http.Header{"Referer": {"javascript:alert(1)"}}},
		{Service: "card", Path: "/a", Header: http.Header{"Referer": {"https://u:p@bdcard.pku.edu.cn/"}}},
		{URL: "http://news.example.com/x", Header: http.Header{"Referer": {card.URL + "/"}}},
		{URL: "http://news.example.com/x", Header: http.Header{"Referer": {"https://portal.pku.edu.cn/"}}},
		{URL: "http://news.example.com/x", Header: http.Header{"Origin": {"http://news.example.com:81"}}},
	} {
		_, err := call.Do(ctx, r)
		require.ErrorIs(t, err, ErrRefused, "%+v", r.Header)
	}
	assert.Equal(t, n, card.n.Load()+web.n.Load(), "nothing was sent")
}

// representationDrop's table answers as the lists it is made of, for
// canonical names, other spellings of them and names it does not hold.
func TestRepresentationDropByTable(t *testing.T) {
	want := func(k string, tagged bool) bool {
		ck := http.CanonicalHeaderKey(k)
		return slices.Contains(digestHeaders, ck) || tagged && slices.Contains(redactedHeaders, ck) || ck == "Content-Length"
	}
	var names []string
	for _, list := range [][]string{digestHeaders, redactedHeaders, {"Content-Length", "Content-Type", "Date", "Server", "X-Other", "Set-Cookie"}} {
		for _, k := range list {
			names = append(names, k, strings.ToLower(k), strings.ToUpper(k), "X-"+k, k+"s")
		}
	}
	for _, k := range names {
		for _, tagged := range []bool{false, true} {
			if got := representationDrop(k, tagged); got != want(k, tagged) {
				t.Errorf("representationDrop(%q, %v) = %v", k, tagged, got)
			}
		}
	}
}
