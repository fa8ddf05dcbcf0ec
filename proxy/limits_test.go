package proxy

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/simplifiedchinese"
)

func TestBodiesDecodedAndBounded(t *testing.T) {
	gbk, _ := simplifiedchinese.GBK.NewEncoder().Bytes([]byte("二教 101 占用 " + cardToken))
	var gz, zl, fl bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`{"ok":"` + cardToken + `"}` + strings.Repeat(" ", 5000)))
	w.Close()
	z := zlib.NewWriter(&zl)
	z.Write([]byte("zlib body"))
	z.Close()
	f, _ := flate.NewWriter(&fl, 5)
	f.Write([]byte("raw deflate body"))
	f.Close()
	var bomb bytes.Buffer
	w = gzip.NewWriter(&bomb)
	w.Write(bytes.Repeat([]byte("a"), 3<<20))
	w.Close()
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gbk":
			w.Header().Set("Content-Type", "text/html; charset=GBK")
			w.Write(gbk)
		case "/gbk-unlabelled":
			w.Header().Set("Content-Type", "text/plain")
			w.Write(gbk)
		case "/meta":
			w.Header().Set("Content-Type", "text/html")
			w.Write(append([]byte(`<html><head><meta charset="gb2312"></head><body>`), gbk...))
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "application/json")
			w.Write(gz.Bytes())
		case "/zlib":
			w.Header().Set("Content-Encoding", "deflate")
			w.Write(zl.Bytes())
		case "/flate":
			w.Header().Set("Content-Encoding", "deflate")
			w.Write(fl.Bytes())
		case "/bomb":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb.Bytes())
		case "/big":
			w.Write(bytes.Repeat([]byte("b"), 2<<20))
		case "/br":
			w.Header().Set("Content-Encoding", "br")
			w.Write([]byte("x"))
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n" + cardToken))
		case "/sniff":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte(`{"a":1}`))
		case "/utf16":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("\xff\xfeh\x00i\x00"))
		case "/headers":
			for i := 0; i < 200; i++ {
				w.Header().Add("X-Filler", strings.Repeat("h", 100))
			}
		}
	})
	p := testProxy(t, card, nil, nil, Limits{MaxResponseBytes: 1 << 20, MaxHeaderBytes: 8 << 10}, nil)
	call := p.NewCall("demo", access("card"))
	get := func(path string) (*Response, error) {
		return call.Do(context.Background(), &Request{Service: "card", Path: path})
	}
	for _, path := range []string{"/gbk", "/gbk-unlabelled", "/meta"} {
		resp, err := get(path)
		require.NoError(t, err, path)
		assert.Contains(t, string(resp.Body), "二教 101 占用 "+Marker, path)
	}
	resp, err := get("/gzip")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(resp.Body), `{"ok":"`+Marker+`"}`))
	assert.Empty(t, resp.Header.Get("Content-Encoding"))
	assert.Equal(t, "gzip, deflate", card.Hits()[len(card.Hits())-1].Header.Get("Accept-Encoding"))
	resp, err = get("/zlib")
	require.NoError(t, err)
	assert.Equal(t, "zlib body", string(resp.Body))
	resp, err = get("/flate")
	require.NoError(t, err)
	assert.Equal(t, "raw deflate body", string(resp.Body))
	for _, path := range []string{"/bomb", "/big"} {
		_, err = get(path)
		require.ErrorIs(t, err, ErrLimit, path)
	}
	_, err = get("/br")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unsupported content encoding")
	resp, err = get("/png")
	require.NoError(t, err)
	assert.True(t, resp.Binary)
	assert.Nil(t, resp.Body)
	assert.Equal(t, "image/png", resp.MediaType)
	resp, err = get("/sniff")
	require.NoError(t, err)
	assert.Equal(t, "application/json", resp.MediaType)
	assert.Equal(t, `{"a":1}`, string(resp.Body))
	resp, err = get("/utf16")
	require.NoError(t, err)
	assert.Equal(t, "hi", string(resp.Body))
	_, err = get("/headers")
	var re *RequestError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "header")
}

func TestRequestTimeout(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	p := testProxy(t, card, nil, nil, Limits{RequestTimeout: 100 * time.Millisecond}, nil)
	_, err := p.NewCall("demo", access("card")).Do(context.Background(), &Request{Service: "card", Path: "/slow"})
	var re *RequestError
	require.ErrorAs(t, err, &re)
	assert.True(t, re.Timeout)
	assert.Contains(t, err.Error(), "timed out")
}

func TestRetries(t *testing.T) {
	var n atomic.Int64
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) < 3 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(503)
			return
		}
		w.Write([]byte("ok"))
	})
	p := testProxy(t, card, nil, nil, Limits{MaxRetries: 5}, nil)
	call := p.NewCall("demo", access("card"))
	resp, err := call.Do(context.Background(), &Request{Service: "card", Path: "/r", Retry: &RetryPolicy{Max: 4, Backoff: time.Millisecond}})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.Status)
	assert.Equal(t, int64(3), card.n.Load())

	// Not for POST, and capped by MaxRetries.
	n.Store(-100)
	resp, err = call.Do(context.Background(), &Request{Service: "card", Path: "/r", Method: "POST", Retry: &RetryPolicy{Max: 4, Backoff: time.Millisecond}})
	require.NoError(t, err)
	assert.Equal(t, 503, resp.Status)
	assert.Equal(t, int64(4), card.n.Load())
	p = testProxy(t, card, nil, nil, Limits{MaxRetries: 1}, nil)
	resp, err = p.NewCall("demo", access("card")).Do(context.Background(), &Request{Service: "card", Path: "/r", Retry: &RetryPolicy{Max: 10, Backoff: time.Millisecond}})
	require.NoError(t, err)
	assert.Equal(t, 503, resp.Status)
	assert.Equal(t, int64(6), card.n.Load())
}

func TestRequestCountPerCall(t *testing.T) {
	card := newRecorder(t, echo)
	p := testProxy(t, card, nil, nil, Limits{MaxRequests: 3}, nil)
	call := p.NewCall("demo", access("card"))
	for i := 0; i < 3; i++ {
		_, err := call.Do(context.Background(), &Request{Service: "card", Path: "/"})
		require.NoError(t, err)
	}
	_, err := call.Do(context.Background(), &Request{Service: "card", Path: "/"})
	require.ErrorIs(t, err, ErrLimit)
	assert.Equal(t, 4, call.Requests())
	assert.Equal(t, int64(3), card.n.Load())
}

// TestConcurrencyBounds runs under -race: many steps at once, never more in
// flight than the call's and the service's bounds.
func TestConcurrencyBounds(t *testing.T) {
	var inFlight, peak atomic.Int64
	release := make(chan struct{})
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			m := peak.Load()
			if n <= m || peak.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
		http.SetCookie(w, &http.Cookie{Name: "c" + r.URL.Path[1:], Value: "v"})
		w.Write([]byte(cardToken))
	})
	p := testProxy(t, card, nil, nil, Limits{CallConcurrency: 3, ServiceConcurrency: 2}, nil)
	calls := []*Call{p.NewCall("a", access("card")), p.NewCall("b", access("card"))}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp, err := calls[i%2].Do(context.Background(), &Request{Service: "card", Path: "/" + string(rune('a'+i))})
			if err == nil && string(resp.Body) != Marker {
				err = assert.AnError
			}
			errs <- err
		}(i)
	}
	// Let the first requests pile up, then release them one by one.
	deadline := time.Now().Add(5 * time.Second)
	for inFlight.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for i := 0; i < 20; i++ {
		release <- struct{}{}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, int64(2), peak.Load(), "the service bound (2) was not kept")
	assert.Equal(t, int64(20), card.n.Load())
}

func TestConcurrencyWaitsForContext(t *testing.T) {
	block := make(chan struct{})
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { <-block })
	defer close(block)
	p := testProxy(t, card, nil, nil, Limits{CallConcurrency: 1}, nil)
	call := p.NewCall("a", access("card"))
	go call.Do(context.Background(), &Request{Service: "card", Path: "/1"})
	for card.n.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := call.Do(ctx, &Request{Service: "card", Path: "/2"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, int64(1), card.n.Load())
}

// readLimited reads a body of its declared size into a buffer of exactly
// that size, and still sees a body longer or shorter than declared, and
// the limit, whatever the declared size says.
func TestReadLimitedSizes(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 100) // 1000 bytes
	oneByOne := func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }
	for _, c := range []struct {
		name        string
		n           int   // bytes the server sends
		size, limit int64 // declared size, limit
		err         bool
	}{
		{"declared", 1000, 1000, 4096, false},
		{"unknown size", 1000, -1, 4096, false},
		{"empty", 0, 0, 4096, false},
		{"shorter than declared", 600, 1000, 4096, false},
		{"longer than declared", 1000, 300, 4096, false},
		{"longer than declared, over the limit", 1000, 300, 999, true},
		{"declared at the limit, more sent", 1000, 999, 999, true},
		{"exactly the limit", 1000, 1000, 1000, false},
		{"unknown size, over the limit", 1000, -1, 999, true},
	} {
		for _, mk := range []func([]byte) io.Reader{func(b []byte) io.Reader { return bytes.NewReader(b) }, oneByOne} {
			got, err := readLimited(mk(body[:c.n]), c.size, c.limit)
			if c.err {
				require.ErrorIs(t, err, ErrLimit, c.name)
				continue
			}
			require.NoError(t, err, c.name)
			assert.Equal(t, body[:c.n], got, c.name)
			if c.size == int64(c.n) && c.n > 0 {
				assert.Equal(t, c.n, cap(got), "%s: the buffer is the declared size", c.name)
			}
		}
	}
	_, err := readLimited(iotest.ErrReader(errors.New("connection reset")), 10, 100)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot read the response body")
	_, err = readLimited(io.MultiReader(bytes.NewReader(body[:10]), iotest.ErrReader(errors.New("connection reset"))), 10, 100)
	require.Error(t, err, "an error after the declared size is not the end of the body")
}

// Under a caller's deadline the proxy keeps its own per-request bound when
// the caller's is later, and the caller's when it comes first.
func TestRequestTimeoutUnderCallerDeadline(t *testing.T) {
	card := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	p := testProxy(t, card, nil, nil, Limits{RequestTimeout: 100 * time.Millisecond}, nil)
	call := p.NewCall("demo", access("card"))

	late, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := call.Do(late, &Request{Service: "card", Path: "/slow"})
	var re *RequestError
	require.ErrorAs(t, err, &re)
	assert.True(t, re.Timeout)
	assert.Contains(t, err.Error(), "timed out after 100ms", "the proxy's own bound")
	assert.Less(t, time.Since(start), 4*time.Second)

	p = testProxy(t, card, nil, nil, Limits{RequestTimeout: time.Minute}, nil)
	call = p.NewCall("demo", access("card"))
	soon, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	_, err = call.Do(soon, &Request{Service: "card", Path: "/slow"})
	require.ErrorAs(t, err, &re)
	assert.True(t, re.Timeout)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the caller's deadline")
}
