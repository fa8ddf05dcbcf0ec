package plugintest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/internal/simcampus"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// campusHost starts the simulated campus and returns a host on its
// services and demo sessions (frozen at now) and every session value.
func campusHost(t *testing.T, now time.Time, opts ...simcampus.Option) (*host.Host, []string, *simcampus.Campus) {
	t.Helper()
	c, err := simcampus.Start(append([]simcampus.Option{simcampus.WithClock(func() time.Time { return now })}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	cat := proxy.Builtin()
	for name, e := range c.Services() {
		cat[name] = &proxy.Service{Name: name, Origin: e.Origin,
			Auth:  proxy.Auth{Cookies: e.Auth.Cookies, Headers: e.Auth.Headers},
			Login: proxy.Login{Redirect: e.Login.Redirect, Status: e.Login.Status, JSON: e.Login.JSON}}
	}
	sec := proxy.Secrets{}
	var values []string
	for name, e := range c.Secrets() {
		sec[name] = &proxy.ServiceSecrets{Cookies: e.Cookies, Headers: e.Headers}
		for _, m := range []map[string]string{e.Cookies, e.Headers} {
			for _, v := range m {
				values = append(values, v)
			}
		}
	}
	require.NotEmpty(t, values)
	return host.New(host.Config{Catalogue: cat, Keystore: proxy.MemKeystore(sec), Clock: func() time.Time { return now }}), values, c
}

const cardDoc = `---
id: wallet
name: 钱包
description: The campus card, for the recorder's tests.
version: 1.0.0
requires: [campus-session]
access:
  campus: [card, portal]
  abilities: [kv]
---
Tools for tests.
`

const cardTool = `description: The card's holder and balance, and the grades of the holder.
effect: read
input:
  type: object
  properties:
    who: {type: string}
steps:
  - request: {service: card, path: /berserker-app/ykt/tsm/queryCard}
    as: card
  - if: .status != 200
    fail: "card answered ${ .status }"
  - request: {service: portal, path: /publicQuery/ctrl/topic/myScore/retrScores.do, query: {asker: "${ $input.who }"}}
    as: scores
  - kv_set: {key: last, value: '$card.body.data.card[0].sno'}
  - return: '{who: $input.who, sno: $card.body.data.card[0].sno, name: $card.body.data.card[0].name, yuan: ($card.body.data.card[0].elec_accamt / 100), xh: $scores.body.xh, n: ($scores.body.scoreLists | length)}'
`

func record(t *testing.T, h *host.Host, files manifest.Files, tool string, input map[string]any, now time.Time) (*manifest.Plugin, *plugintest.Recording) {
	t.Helper()
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), l.Error())
	doc, l := h.Load(p)
	require.False(t, l.HasErrors(), l.Error())
	rec, err := plugintest.Record(context.Background(), doc, host.Call{Tool: tool, Input: input}, plugintest.RecordOptions{Now: &now})
	require.NoError(t, err)
	return p, rec
}

// A recording against the simulated campus holds the exchanges as the
// steps saw them and the result; written with the student's number and name
// scrubbed, it holds no session value and no personal value, replays to
// the same (scrubbed) result, and the same value has the same placeholder
// everywhere, the input and the store included.
func TestRecordCampusReplays(t *testing.T) {
	now := time.Date(2026, 4, 27, 12, 0, 0, 0, time.UTC)
	h, secrets, _ := campusHost(t, now)
	files := manifest.Files{"PLUGIN.md": []byte(cardDoc), "tools/holder.yaml": []byte(cardTool)}
	p, rec := record(t, h, files, "holder", map[string]any{"who": "张测试"}, now)
	require.NoError(t, rec.Err)
	assert.Contains(t, string(rec.Result), simcampus.DemoStudentID, "the live result names the student")
	require.Len(t, rec.Case.Exchanges, 2)

	text, err := rec.TestFile(plugintest.WriteOptions{Scrub: []string{simcampus.DemoStudentID, simcampus.DemoStudentName}})
	require.NoError(t, err)
	s := string(text)
	for _, v := range secrets {
		assert.NotContains(t, s, v, "a session value")
	}
	for _, v := range []string{simcampus.DemoStudentID, simcampus.DemoStudentName, url.QueryEscape(simcampus.DemoStudentName)} {
		assert.NotContains(t, s, v, "a personal value")
	}
	// One placeholder per value, used in the request, the responses, the
	// output and the store.
	var doc struct {
		Cases []struct {
			Input     map[string]any
			Exchanges []struct {
				Request struct {
					Query map[string]string
				}
			}
			Expect struct {
				Output map[string]any
				KV     map[string]any
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(text, &doc))
	c := doc.Cases[0]
	name, sno := c.Expect.Output["name"], c.Expect.Output["sno"]
	assert.Equal(t, name, c.Input["who"])
	assert.Equal(t, name, c.Exchanges[1].Request.Query["asker"])
	assert.Equal(t, sno, c.Expect.Output["xh"])
	assert.Equal(t, sno, c.Expect.KV["last"])
	assert.Regexp(t, `^9\d{9}$`, sno, "a student number stays ten digits")
	assert.Equal(t, 3, len([]rune(name.(string))), "a name keeps its length")

	rep := plugintest.Verify(context.Background(), p, "holder", text, plugintest.Options{Catalogue: h.Catalogue()})
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 1)
	assert.Empty(t, rep.Cases[0].Failures)

	// The replay needs nothing live: a catalogue pointing nowhere.
	dead := proxy.Builtin()
	rep = plugintest.Verify(context.Background(), p, "holder", text, plugintest.Options{Catalogue: dead})
	assert.True(t, rep.OK(), "%v", rep.Cases)
}

// A service that says the session expired is recorded as the answer that
// means it, and the case replays to login_required.
func TestRecordLoginRequired(t *testing.T) {
	now := time.Date(2026, 4, 27, 12, 0, 0, 0, time.UTC)
	h, _, _ := campusHost(t, now, simcampus.WithExpired("card"))
	files := manifest.Files{"PLUGIN.md": []byte(cardDoc), "tools/holder.yaml": []byte(cardTool)}
	p, rec := record(t, h, files, "holder", nil, now)
	require.NoError(t, rec.Err)
	assert.Contains(t, string(rec.Result), "login_required")
	text, err := rec.TestFile(plugintest.WriteOptions{})
	require.NoError(t, err)
	assert.Contains(t, string(text), "status: 401")
	rep := plugintest.Verify(context.Background(), p, "login", text, plugintest.Options{Catalogue: h.Catalogue()})
	assert.True(t, rep.OK(), "%v %v", rep.Problems, rep.Cases)
}

const webRecDoc = `---
id: board
name: 公告
description: A web board, for the recorder's tests.
version: 1.0.0
requires: [network]
access:
  web: [http://board.example.edu.cn:8080]
---
Tools for tests.
`

const webRecTool = `description: Titles of the board's first page and a search.
effect: read
untrusted: true
input:
  type: object
  properties:
    q: {type: string}
steps:
  - request: {url: "http://board.example.edu.cn:8080/list", query: {page: "1"}}
  - html: {select: li}
    as: titles
  - request: {method: POST, url: "http://board.example.edu.cn:8080/search", form: {q: "${ $input.q }"}}
  - return: '{titles: $titles, hits: .body.hits, who: .body.owner}'
`

// A web recording is keyed by origin, holds the page and the redirected
// search as the steps saw them (no Set-Cookie), and replays offline.
func TestRecordWebReplays(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "web-cookie-s3cr3t"})
		switch r.URL.Path {
		case "/list":
			w.Header().Set("Content-Type", "text/html; charset=gbk")
			w.Write([]byte("<ul><li>\xb9\xab\xb8\xe6</li><li>Li Lei's notes</li></ul>")) // 公告 in GBK
		case "/search":
			http.Redirect(w, r, "/results?q="+url.QueryEscape(r.FormValue("q")), http.StatusSeeOther)
		case "/results":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"hits": 2, "owner": "Li Lei", "q": "` + r.URL.Query().Get("q") + `"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	now := time.Date(2026, 4, 27, 12, 0, 0, 0, time.UTC)
	h := host.New(host.Config{Resolve: map[string]string{"board.example.edu.cn:8080": srv.Listener.Addr().String()}, Clock: func() time.Time { return now }})
	files := manifest.Files{"PLUGIN.md": []byte(webRecDoc), "tools/board.yaml": []byte(webRecTool)}
	p, rec := record(t, h, files, "board", map[string]any{"q": "Li Lei"}, now)
	require.NoError(t, rec.Err)
	require.Len(t, rec.Case.Exchanges, 2, "the redirect is the proxy's: the step saw one answer")
	text, err := rec.TestFile(plugintest.WriteOptions{Scrub: []string{"Li Lei"}})
	require.NoError(t, err)
	s := string(text)
	assert.Contains(t, s, "origin: 'http://board.example.edu.cn:8080'")
	assert.Contains(t, s, "公告", "the body as the steps saw it: UTF-8")
	assert.Contains(t, s, "charset=utf-8")
	for _, v := range []string{"Li Lei", "Li+Lei", "Li%20Lei", "web-cookie-s3cr3t", "Set-Cookie"} {
		assert.NotContains(t, s, v)
	}
	srv.Close()
	rep := plugintest.Verify(context.Background(), p, "board", text, plugintest.Options{})
	assert.True(t, rep.OK(), "%v %v", rep.Problems, rep.Cases)
}

// A run that fails, or whose request failed on the way, writes nothing.
func TestRecordFailedRun(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close()
	h := host.New(host.Config{Resolve: map[string]string{"board.example.edu.cn:8080": addr}})
	files := manifest.Files{"PLUGIN.md": []byte(webRecDoc), "tools/board.yaml": []byte(webRecTool)}
	_, rec := record(t, h, files, "board", nil, time.Now())
	require.Error(t, rec.Err)
	_, err := rec.TestFile(plugintest.WriteOptions{})
	assert.ErrorContains(t, err, "the run failed, so there is nothing to record")
}

// Scrubbing refuses values too short to be safe, and WriteCase never
// replaces a file without force.
func TestScrubAndWriteCase(t *testing.T) {
	now := time.Date(2026, 4, 27, 12, 0, 0, 0, time.UTC)
	h := host.New(host.Config{Clock: func() time.Time { return now }})
	files := manifest.Files{"PLUGIN.md": []byte(strings.Replace(webRecDoc, "requires: [network]\n", "", 1)),
		"tools/echo.yaml": []byte("description: Echo.\neffect: read\ninput: {type: object, properties: {x: {type: string}}}\nsteps:\n  - return: '{x: $input.x, n: ($input.x | length)}'\n")}
	_, rec := record(t, h, files, "echo", map[string]any{"x": "ab"}, now)
	_, err := rec.TestFile(plugintest.WriteOptions{Scrub: []string{"a"}})
	assert.ErrorContains(t, err, "at least 2 characters")
	_, err = rec.TestFile(plugintest.WriteOptions{Scrub: []string{" ab"}})
	assert.ErrorContains(t, err, "no surrounding spaces")
	text, err := rec.TestFile(plugintest.WriteOptions{Scrub: []string{"ab"}})
	require.NoError(t, err)
	assert.NotContains(t, string(text), "ab\n")

	path := filepath.Join(t.TempDir(), "tests", "echo.yaml")
	require.NoError(t, plugintest.WriteCase(path, text, false))
	err = plugintest.WriteCase(path, []byte("other"), false)
	assert.ErrorContains(t, err, "exists: pass --force")
	b, _ := os.ReadFile(path)
	assert.Equal(t, string(text), string(b))
	require.NoError(t, plugintest.WriteCase(path, []byte("other"), true))
	b, _ = os.ReadFile(path)
	assert.Equal(t, "other", string(b))
}

// What the host's login knows of the student (the keystore's login
// section) is scrubbed without being named.
func TestRecordScrubsTheLogin(t *testing.T) {
	now := time.Date(2026, 4, 27, 12, 0, 0, 0, time.UTC)
	live, secrets, c := campusHost(t, now)
	ks, err := proxy.OpenKeystore(filepath.Join(t.TempDir(), "keystore.json"))
	require.NoError(t, err)
	for name, e := range c.Secrets() {
		require.NoError(t, ks.Put(name, &proxy.ServiceSecrets{Cookies: e.Cookies, Headers: e.Headers}))
	}
	require.NoError(t, ks.SetLogin(proxy.LoginInfo{User: simcampus.DemoStudentID, Name: simcampus.DemoStudentName}))
	h := host.New(host.Config{Catalogue: live.Catalogue(), Keystore: ks, Clock: func() time.Time { return now }})
	files := manifest.Files{"PLUGIN.md": []byte(cardDoc), "tools/holder.yaml": []byte(cardTool)}
	p, rec := record(t, h, files, "holder", map[string]any{"who": "x1"}, now)
	require.NoError(t, rec.Err)
	assert.Contains(t, string(rec.Result), simcampus.DemoStudentName)
	text, err := rec.TestFile(plugintest.WriteOptions{})
	require.NoError(t, err)
	for _, v := range append(secrets, simcampus.DemoStudentID, simcampus.DemoStudentName) {
		assert.NotContains(t, string(text), v)
	}
	rep := plugintest.Verify(context.Background(), p, "holder", text, plugintest.Options{Catalogue: h.Catalogue()})
	assert.True(t, rep.OK(), "%v %v", rep.Problems, rep.Cases)
}
