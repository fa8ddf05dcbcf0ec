package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"strconv"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Item 8 of issue 12 (Content-Length): a header that states the length or
// a digest of the body as the server sent it never passes beside the body
// a step sees; Content-Length is the length of that body. Today's main
// passes the server's Content-Length beside a redacted body (the length of
// what was redacted) and its digests.
func TestResponseLengthAndDigestHeaders(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		body := []byte("echo=" + r.Header.Get("Synjones-Auth") + " end")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, h := range []string{"Content-MD5", "Digest", "Repr-Digest", "Content-Digest", "ETag", "Content-Range"} {
			w.Header().Set(h, "sha-256=:x:")
		}
		if r.URL.Path == "/gzip" {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(body)
			zw.Close()
			body = z.Bytes()
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	call := p.NewCall("demo", access("card"))
	for _, path := range []string{"/plain", "/gzip"} {
		resp, err := call.Do(context.Background(), &Request{Service: "card", Path: path})
		require.NoError(t, err)
		require.Equal(t, "echo="+Marker+" end", string(resp.Body), path)
		assert.Equal(t, strconv.Itoa(len(resp.Body)), resp.Header.Get("Content-Length"), path)
		for _, h := range []string{"Content-MD5", "Digest", "Repr-Digest", "Content-Digest", "ETag", "Content-Range", "Content-Encoding"} {
			assert.Empty(t, resp.Header.Values(h), "%s beside a redacted body (%s)", h, path)
		}
	}
	// Beside a body nothing was redacted from, the tag passes; the
	// digests of the server's bytes still do not.
	plain := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-MD5", "abc")
		w.Write([]byte("nothing secret"))
	})
	p = testProxy(t, plain, nil, nil, Limits{}, nil)
	resp, err := p.NewCall("demo", access("card")).Do(context.Background(), &Request{Service: "card", Path: "/x"})
	require.NoError(t, err)
	assert.Equal(t, `"v1"`, resp.Header.Get("ETag"))
	assert.Empty(t, resp.Header.Get("Content-MD5"))
	assert.Equal(t, "14", resp.Header.Get("Content-Length"))
}

// utf7 encodes s as RFC 2152's UTF-7 with every character in base64.
func utf7(s string) string {
	units := utf16.Encode([]rune(s))
	b := make([]byte, 0, 2*len(units))
	for _, u := range units {
		b = append(b, byte(u>>8), byte(u))
	}
	var out []byte
	var acc uint32
	bits := 0
	for _, c := range b {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 6 {
			bits -= 6
			out = append(out, stdAlphabet[acc>>bits&63])
		}
	}
	if bits > 0 {
		out = append(out, stdAlphabet[acc<<(6-bits)&63])
	}
	return "+" + string(out) + "-"
}

// Item 7 of issue 12: a body labelled charset=utf-7 is decoded by the
// proxy and redacted; today's main hands it on as ASCII, which a step
// decodes back into the credential.
func TestRedactUTF7Body(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-7")
		w.Write([]byte("a+-b " + utf7(r.Header.Get("Synjones-Auth")) + " " + utf7("二教") + " end"))
	})
	p := testProxy(t, card, nil, nil, Limits{}, nil)
	resp, err := p.NewCall("demo", access("card")).Do(context.Background(), &Request{Service: "card", Path: "/x"})
	require.NoError(t, err)
	assert.Equal(t, "a+b "+Marker+" 二教 end", string(resp.Body))
	assert.Equal(t, "a+b x\uFFFD", string(decodeUTF7([]byte("a+-b +AHg-\xff"))))
}
