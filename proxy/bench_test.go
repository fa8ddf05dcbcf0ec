package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// memRT answers every request from memory: the network taken out.
type memRT struct {
	body []byte
	hdr  http.Header
}

func (m *memRT) RoundTrip(r *http.Request) (*http.Response, error) {
	// A fresh header, as a transport reads one (the proxy edits it).
	h := http.Header{
		"Content-Type":  m.hdr["Content-Type"],
		"Date":          m.hdr["Date"],
		"Server":        m.hdr["Server"],
		"Synjones-Auth": m.hdr["Synjones-Auth"],
	}
	return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(bytes.NewReader(m.body)),
		ContentLength: int64(len(m.body)), Request: r}, nil
}

// benchBody is a 1 KB JSON body like the card service's, with the token in it.
func benchBody() []byte {
	rec := `{"resume":"农园食堂一层","turnoverType":"消费","tranamt":1250,"cardBalance":12345,"effectdateStr":"2026-04-01 12:03:11","icon":"consume"},`
	var b strings.Builder
	b.WriteString(`{"code":200,"success":true,"msg":"操作成功","token":"` + cardToken + `","data":{"records":[`)
	for b.Len() < 1024-len(rec)-40 {
		b.WriteString(rec)
	}
	b.WriteString(`{}],"total":7,"current":1,"pages":1}}`)
	for b.Len() < 1024 {
		b.WriteString(" ")
	}
	return []byte(b.String())
}

// reusedRT answers every request with the same response object, its
// header and body reset: a transport that costs nothing, so that what is
// measured is the proxy alone. Only a benchmark may do this (the proxy
// hands the response's header to its caller, who here ignores it).
type reusedRT struct {
	resp http.Response
	body bytes.Reader
	data []byte
	hdr  http.Header // the fields to answer with, never written
	vals http.Header // the response's own value slices, reset from hdr
}

type nopClose struct{ *bytes.Reader }

func (nopClose) Close() error { return nil }

func newReusedRT(body []byte, hdr http.Header) *reusedRT {
	m := &reusedRT{data: body, hdr: hdr, vals: http.Header{}}
	for k, v := range hdr {
		m.vals[k] = slices.Clone(v)
	}
	m.resp = http.Response{StatusCode: 200, Header: http.Header{}, Body: nopClose{&m.body}, ContentLength: int64(len(body))}
	return m
}

func (m *reusedRT) RoundTrip(r *http.Request) (*http.Response, error) {
	for k, v := range m.hdr {
		vs := m.vals[k]
		copy(vs, v)
		m.resp.Header[k] = vs
	}
	m.body.Reset(m.data)
	m.resp.Request = r
	return &m.resp, nil
}

// BenchmarkSignAndRedact is the proxy's own cost per request: checking the
// request, signing, header filtering, decoding and redacting a 1 KB body.
// The caller's context has no deadline, so the proxy sets its own
// per-request timer. In stub=reused the transport costs nothing; in
// stub=fresh it makes a new response per request as a real one does (a
// header map, the response, a body reader: allocations the garbage
// collector then pays for, which are the transport's, not the proxy's).
func BenchmarkSignAndRedact(b *testing.B) {
	benchSignAndRedact(b, context.Background())
}

// BenchmarkSignAndRedactDeadline is the same request under a deadline the
// caller set just before, as the interpreter does (its per-request
// timeout): the proxy then needs no timer of its own.
func BenchmarkSignAndRedactDeadline(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultRequestTimeout)
	defer cancel()
	benchSignAndRedact(b, ctx)
}

func benchSignAndRedact(b *testing.B, ctx context.Context) {
	body := benchBody()
	if len(body) != 1024 {
		b.Fatalf("body is %d bytes", len(body))
	}
	hdr := http.Header{
		"Content-Type":  {"application/json;charset=UTF-8"},
		"Date":          {"Mon, 30 Nov 2026 14:00:00 GMT"},
		"Server":        {"nginx"},
		"Synjones-Auth": {cardToken},
	}
	b.Run("stub=reused", func(b *testing.B) { benchDo(b, ctx, newReusedRT(body, hdr)) })
	b.Run("stub=fresh", func(b *testing.B) { benchDo(b, ctx, &memRT{body: body, hdr: hdr}) })
}

func benchDo(b *testing.B, ctx context.Context, rt http.RoundTripper) {
	cat := Catalogue{"card": {Name: "card", Origin: "https://bdcard.pku.edu.cn",
		Auth:    Auth{Headers: []string{"synjones-auth"}},
		Login:   Login{Redirect: "/iaaa/login", Status: []int{401}},
		Headers: map[string]string{"synaccesssource": "h5"},
		Query:   map[string]string{"synAccessSource": "h5"}}}
	p := New(Config{Catalogue: cat, Keystore: MemKeystore(testSecrets())})
	p.campusRT = rt
	call := p.NewCall("bench", access("card:/berserker-app/"))
	req := &Request{Service: "card", Path: "/berserker-app/ykt/tsm/queryCard", Header: http.Header{"Accept": {"application/json"}}}
	check := func() {
		resp, err := call.Do(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Body) != 1024-len(cardToken)+len(Marker) || !bytes.Contains(resp.Body, []byte(`"token":"`+Marker+`"`)) ||
			resp.Header.Get("Synjones-Auth") != "" || resp.Header.Get("Server") != "nginx" {
			b.Fatalf("not redacted: %s %v", resp.Body, resp.Header)
		}
	}
	check()
	call.p.lim.MaxRequests = 1 << 30
	b.SetBytes(1024)
	b.ReportAllocs()
	n, c0 := 0, cpuTime()
	for b.Loop() {
		if _, err := call.Do(ctx, req); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if c := cpuTime() - c0; c > 0 {
		b.ReportMetric(float64(c.Nanoseconds())/float64(n), "cpu-ns/op")
	}
	b.StopTimer()
	check() // the last answers were right too
}

// BenchmarkRedact1KB is the redactor alone on the same body, with and
// without escape bytes that force the unit-by-unit matcher.
func BenchmarkRedact1KB(b *testing.B) {
	r := newRedactor()
	for _, ss := range testSecrets() {
		for _, v := range ss.Cookies {
			r.add(v)
		}
		for _, v := range ss.Headers {
			r.add(v)
		}
	}
	plain := benchBody()
	escaped := bytes.Replace(plain, []byte("农园"), []byte(`\u519c\u56ed`), -1)
	for name, body := range map[string][]byte{"plain": plain, "escaped": escaped} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			n, c0 := 0, cpuTime()
			for b.Loop() {
				r.bytes(body)
				n++
			}
			if c := cpuTime() - c0; c > 0 {
				b.ReportMetric(float64(c.Nanoseconds())/float64(n), "cpu-ns/op")
			}
		})
	}
}
