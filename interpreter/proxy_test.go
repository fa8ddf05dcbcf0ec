package interpreter_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// TestRetry: a declared retry rides out two 503s within the deadline.
func TestRetry(t *testing.T) {
	var n atomic.Int32
	srv := campus(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok": true}`))
	})
	p := doc(t, "access:\n  campus: [portal]\n", map[string]string{
		"retry":   tool("  - request:\n      service: portal\n      path: /x\n      retry: { attempts: 3, backoff: 10ms }\n  - return: .body\n"),
		"noretry": tool("  - request:\n      service: portal\n      path: /x\n  - return: .status\n"),
		"most":    tool("  - request:\n      service: portal\n      path: /x\n      retry: { attempts: 5, backoff: 1ms }\n  - return: .status\n"),
	})
	prog := compile(t, p)
	res, err := run(t, prog, "retry", nil, interpreter.WithTransport(call(t, p, srv, "portal")))
	require.NoError(t, err)
	assert.JSONEq(t, `{"ok": true}`, string(res.JSON))
	assert.Equal(t, int32(3), n.Load())
	n.Store(0)
	res, err = run(t, prog, "noretry", nil, interpreter.WithTransport(call(t, p, srv, "portal")))
	require.NoError(t, err)
	assert.Equal(t, "503", string(res.JSON))

	// The most attempts a document may declare are all made: the proxy's
	// cap is the declaration's bound, not a lower one beside it.
	n.Store(-100)
	res, err = run(t, prog, "most", nil, interpreter.WithTransport(call(t, p, srv, "portal")))
	require.NoError(t, err)
	assert.Equal(t, "503", string(res.JSON))
	assert.Equal(t, int32(-95), n.Load(), "attempts: 5 is five requests")
}

// TestGBKPage: a GBK page reaches the html step as UTF-8 text.
func TestGBKPage(t *testing.T) {
	page, err := simplifiedchinese.GBK.NewEncoder().String("<html><body><li>二教101</li><li>理教</li></body></html>")
	require.NoError(t, err)
	srv := campus(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=gbk")
		w.Write([]byte(page))
	})
	p := doc(t, "access:\n  campus: [portal]\n", map[string]string{
		"gbk": tool("  - request:\n      service: portal\n      path: /old.asp\n  - html: { select: li }\n"),
	})
	prog := compile(t, p)
	res, err := run(t, prog, "gbk", nil, interpreter.WithTransport(call(t, p, srv, "portal")))
	require.NoError(t, err)
	assert.Equal(t, `["二教101","理教"]`, string(res.JSON))
}
