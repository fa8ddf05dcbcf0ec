package devserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/internal/devserver"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretCookie is a credential as a real session looks: it must never
// reach the page.
const secretCookie = "9f2c1e7ab04d4c1f8e3b6a5d2c7e1f00-JSESSIONID-live"

// card is a campus service that echoes the session it was sent, in its
// body and in a header, as a careless service might.
func cardServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("JSESSIONID")
		sess := ""
		if c != nil {
			sess = c.Value
		}
		if sess == "" {
			http.Redirect(w, r, "/iaaa/login", http.StatusFound)
			return
		}
		w.Header().Set("X-Echo-Session", sess)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"balance": 1234, "owner": "demo", "session": sess, "query": r.URL.RawQuery})
	}))
	t.Cleanup(srv.Close)
	return srv
}

const pluginMD = `---
id: wallet-dev
name: 钱包
description: Card balance.
version: 1.0.0
icon: wallet
maxAgentSteps: 6
requires: [campus-session]
access:
  campus: [card]
dataSources:
  bal: {title: 余额, tool: balance, args: {unit: fen}, ttlMs: 60000}
preferences:
  unit: {title: 单位, kind: choice, options: [{value: yuan, label: 元}, {value: fen, label: 分}], default: fen}
contributes:
  widgets:
    - {key: balanceCard, title: 余额, dataSource: bal, template: balance}
---
Use balance.
`

const balanceTool = `title: Balance
description: The card's balance.
effect: read
input:
  type: object
  properties:
    unit: {type: string, enum: [yuan, fen], description: "the unit"}
    days: {type: integer, description: "how many days"}
  required: [unit]
steps:
  - request:
      service: card
      path: /api/balance
      query: {unit: "${ $input.unit }"}
    as: res
  - jq: '{balance: $res.body.balance, owner: $res.body.owner, echoed: $res.body.session, header: $res.headers["x-echo-session"]}'
`

const widgetJSON = `{"type": "card", "title": "校园卡", "value": "${ .balance } 分", "subtitle": "${ .owner }", "items": "${ [.balance, .owner] }", "item": {"title": "${ . }"}}`

type fixture struct {
	host *host.Host
	dir  string
	srv  *devserver.Server
	web  *httptest.Server
	base string // the page's URL
}

func writeDoc(t *testing.T, dir string) {
	t.Helper()
	for name, text := range map[string]string{
		"PLUGIN.md":            pluginMD,
		"tools/balance.yaml":   balanceTool,
		"widgets/balance.json": widgetJSON,
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
}

// load reads the document as lint does: the parse and the steps' compile.
func load(dir string, h *host.Host) func() (*manifest.Plugin, diag.List, error) {
	return func() (*manifest.Plugin, diag.List, error) {
		files, err := manifest.ReadDir(dir)
		if err != nil {
			return nil, diag.List{}, err
		}
		p, l := manifest.Parse(files)
		if p != nil && p.ID != "" {
			_, cl := h.Load(p)
			l.Merge(cl)
		}
		l.Sort()
		return p, l, nil
	}
}

func newFixture(t *testing.T, mutate func(*devserver.Config)) *fixture {
	t.Helper()
	card := cardServer(t)
	dir := t.TempDir()
	writeDoc(t, dir)
	secrets := filepath.Join(t.TempDir(), "secrets.yaml")
	require.NoError(t, os.WriteFile(secrets, []byte("card:\n  cookies: {JSESSIONID: \""+secretCookie+"\"}\n"), 0o600))
	sec, err := host.ReadSecretsFile(secrets, nil)
	require.NoError(t, err)
	cat := proxy.Builtin().Merge(proxy.Catalogue{"card": {Name: "card", Origin: card.URL,
		Auth: proxy.Auth{Cookies: []string{"JSESSIONID"}}, Login: proxy.Login{Redirect: "/iaaa/login"}}})
	h := host.New(host.Config{Catalogue: cat, Keystore: proxy.MemKeystore(sec)})
	cfg := devserver.Config{Path: dir, Load: load(dir, h), Host: h, Mode: "live, with " + secrets, WatchEvery: 20 * time.Millisecond}
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := devserver.New(cfg)
	require.NoError(t, err)
	web := httptest.NewServer(srv.Handler())
	t.Cleanup(web.Close)
	return &fixture{host: cfg.Host, dir: dir, srv: srv, web: web, base: web.URL + "/" + srv.Token() + "/"}
}

func (f *fixture) post(t *testing.T, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(f.base+path, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (f *fixture) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(f.base + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestStateShowsPreferences: the page lists each preference as the
// settings registry does: key PLUGIN.NAME, the reference's kind, options
// {value, label} and the default.
func TestStateShowsPreferences(t *testing.T) {
	f := newFixture(t, nil)
	code, body := f.get(t, "api/state")
	require.Equal(t, http.StatusOK, code, body)
	var st struct {
		Preferences []map[string]any `json:"preferences"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	require.Len(t, st.Preferences, 1)
	pr := st.Preferences[0]
	assert.Equal(t, "wallet-dev.unit", pr["key"])
	assert.Equal(t, "choice", pr["kind"])
	assert.Equal(t, []any{map[string]any{"value": "yuan", "label": "元"}, map[string]any{"value": "fen", "label": "分"}}, pr["options"])
	assert.Equal(t, "fen", pr["default"])
}

// The page and its scripts come from the binary: no CDN, no external
// font or script, and a policy that allows only the server's own.
func TestPageIsSelfContained(t *testing.T) {
	f := newFixture(t, nil)
	resp, err := http.Get(f.base)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	csp := resp.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "script-src 'self'")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
	for _, path := range []string{"", "app.js", "app.css"} {
		_, text := f.get(t, path)
		if path == "" {
			text = string(b)
		}
		for _, bad := range []string{"http://", "https://", "//cdn", "@import", "fonts.googleapis"} {
			assert.NotContains(t, text, bad, "%s refers outside the binary", path)
		}
	}
}

// A request whose Host or Origin is not the server's own loopback origin is
// refused before anything else (DNS rebinding), and a path without the
// token is not found; the token is compared whole.
func TestForeignHostOriginAndTokenAreRefused(t *testing.T) {
	f := newFixture(t, nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(f.web.URL, "http://"))
	do := func(method, url, host, origin string) int {
		req, err := http.NewRequest(method, url, strings.NewReader(`{"tool":"balance","input":{"unit":"fen"}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, do("GET", f.base+"api/state", "", ""))
	assert.Equal(t, http.StatusOK, do("POST", f.base+"api/run", "", "http://127.0.0.1:"+port))
	assert.Equal(t, http.StatusOK, do("GET", f.base+"api/state", "localhost:"+port, "http://localhost:"+port))
	assert.Equal(t, http.StatusForbidden, do("GET", f.base+"api/state", "attacker.example:"+port, ""), "a rebound name")
	assert.Equal(t, http.StatusForbidden, do("POST", f.base+"api/run", "", "http://attacker.example"), "a page of another origin")
	assert.Equal(t, http.StatusForbidden, do("POST", f.base+"api/run", "", "http://127.0.0.1:1"), "another loopback port")
	assert.Equal(t, http.StatusForbidden, do("GET", f.base, "127.0.0.1:1", ""), "another port in Host")
	assert.Equal(t, http.StatusNotFound, do("GET", f.web.URL+"/api/state", "", ""), "no token")
	assert.Equal(t, http.StatusNotFound, do("GET", f.web.URL+"/"+f.srv.Token()[:10]+"/api/state", "", ""), "a token's prefix")
	assert.Equal(t, http.StatusNotFound, do("GET", f.web.URL+"/"+f.srv.Token()+"x/api/state", "", ""), "a longer token")
	assert.Len(t, f.srv.Token(), 48, "192 random bits")
}

// Bodies are bounded and the API takes JSON only (a form post from
// another page cannot reach it).
func TestBodiesAreBounded(t *testing.T) {
	f := newFixture(t, func(c *devserver.Config) { c.MaxBody = 1024 })
	code, body := f.post(t, "api/scratch", `{"kind":"jq","program":".","input":"`+strings.Repeat("x", 2000)+`"}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, code, body)
	resp, err := http.Post(f.base+"api/run", "application/x-www-form-urlencoded", strings.NewReader("tool=balance"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	code, body = f.post(t, "api/run", `{"tool":"balance"} {"tool":"x"}`)
	assert.Equal(t, http.StatusBadRequest, code, body)
}

// A run shows the result and the trace (each step with its position, time
// and output; the request's URL, status and answer), and no text the page
// receives holds the session from the secrets file, though the service
// echoed it in its body and a header.
func TestRunShowsResultAndTraceWithoutCredentials(t *testing.T) {
	f := newFixture(t, nil)
	code, body := f.post(t, "api/run", `{"tool":"balance","input":{"unit":"fen","days":3}}`)
	require.Equal(t, http.StatusOK, code, body)
	var rec struct {
		ID     string          `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
		Trace  []struct {
			Label, Kind, Pos string
			Output           json.RawMessage
			Ms               float64
			Requests         []struct {
				Method, Service, Target, URL, RespBody string
				RespHeaders                            map[string]string
				Status                                 int
			}
		} `json:"trace"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &rec), body)
	require.Empty(t, rec.Error)
	var res map[string]any
	require.NoError(t, json.Unmarshal(rec.Result, &res))
	assert.EqualValues(t, 1234, res["balance"])
	assert.Equal(t, "demo", res["owner"])
	require.Len(t, rec.Trace, 2)
	assert.Equal(t, "request", rec.Trace[0].Kind)
	assert.Equal(t, "tools/balance.yaml:11:5", rec.Trace[0].Pos)
	require.Len(t, rec.Trace[0].Requests, 1)
	rq := rec.Trace[0].Requests[0]
	assert.Equal(t, "GET", rq.Method)
	assert.Equal(t, "card", rq.Service)
	assert.Equal(t, "/api/balance?unit=fen", rq.Target, "the path with the query as sent")
	assert.Equal(t, 200, rq.Status)
	assert.Contains(t, rq.URL, "/api/balance?unit=fen")
	assert.Contains(t, rq.RespBody, `"balance":1234`)
	assert.Contains(t, rq.RespBody, `[redacted]`, "the echoed session")
	assert.Equal(t, "[redacted]", rq.RespHeaders["X-Echo-Session"])
	assert.Equal(t, "jq", rec.Trace[1].Kind)
	assert.Contains(t, string(rec.Trace[1].Output), `"owner":"demo"`)
	_, state := f.get(t, "api/state")
	assert.Contains(t, state, "run "+rec.ID+": step 1", "the run's answer is offered to the scratch pane")
	for what, text := range map[string]string{"run": body, "state": state} {
		assert.NotContains(t, text, secretCookie, "%s shows the credential", what)
		assert.NotContains(t, text, secretCookie[:16], "%s shows part of the credential", what)
	}

	// A widget preview runs its data source and renders the template.
	code, body = f.post(t, "api/widget", `{"key":"balanceCard"}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.NotContains(t, body, secretCookie)
	var wa struct {
		UI    map[string]any `json:"ui"`
		Error string         `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &wa))
	require.Empty(t, wa.Error)
	assert.Equal(t, map[string]any{"type": "card", "title": "校园卡", "value": "1234 分", "subtitle": "demo",
		"items": []any{map[string]any{"title": float64(1234)}, map[string]any{"title": "demo"}}}, wa.UI)
}

// Input that fails the schema, an unknown tool and a refused call are
// answered, not run.
func TestRunErrors(t *testing.T) {
	f := newFixture(t, nil)
	code, body := f.post(t, "api/run", `{"tool":"balance","input":{"unit":"euro"}}`)
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `"error":`)
	assert.Contains(t, body, "euro")
	code, body = f.post(t, "api/run", `{"tool":"nope","input":{}}`)
	assert.Equal(t, http.StatusNotFound, code, body)
	code, body = f.post(t, "api/run", `{"tool":"balance","input":[1]}`)
	assert.Equal(t, http.StatusBadRequest, code, body)
}

// Runs at once are bounded: beyond the bound the server answers 503.
func TestConcurrentRunsAreBounded(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"balance": 1, "owner": "x"}`)
	}))
	defer slow.Close()
	defer close(release)
	f := newFixture(t, func(c *devserver.Config) {
		c.MaxRuns = 1
		cat := proxy.Builtin().Merge(proxy.Catalogue{"card": {Name: "card", Origin: slow.URL, Auth: proxy.Auth{Cookies: []string{"JSESSIONID"}}}})
		c.Host = host.New(host.Config{Catalogue: cat, Keystore: proxy.MemKeystore(proxy.Secrets{"card": {Cookies: map[string]string{"JSESSIONID": "s"}}})})
		c.Load = load(c.Path, c.Host)
	})
	done := make(chan int, 1)
	go func() {
		code, _ := f.post(t, "api/run", `{"tool":"balance","input":{"unit":"fen"}}`)
		done <- code
	}()
	<-entered
	code, body := f.post(t, "api/run", `{"tool":"balance","input":{"unit":"fen"}}`)
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Contains(t, body, "busy")
	code, _ = f.post(t, "api/widget", `{"key":"balanceCard"}`)
	assert.Equal(t, http.StatusServiceUnavailable, code, "a widget's data source is a run too")
	release <- struct{}{}
	assert.Equal(t, http.StatusOK, <-done)
}

// The scratch pane compiles with the engine's step compiler: jq results,
// jq's compile errors, the hardening (no env, no input), CSS selections
// and attributes, and a bad selector.
func TestScratch(t *testing.T) {
	f := newFixture(t, nil)
	type answer struct {
		OK     bool   `json:"ok"`
		Result string `json:"result"`
		Error  string `json:"error"`
	}
	ask := func(body string) answer {
		code, text := f.post(t, "api/scratch", body)
		require.Equal(t, http.StatusOK, code, text)
		var a answer
		require.NoError(t, json.Unmarshal([]byte(text), &a), text)
		return a
	}
	a := ask(`{"kind":"jq","program":"[.rooms[] | select(.seats > 50) | .name]","input":"{\"rooms\":[{\"name\":\"101\",\"seats\":80},{\"name\":\"102\",\"seats\":20}]}"}`)
	assert.True(t, a.OK, a.Error)
	assert.Equal(t, `["101"]`, a.Result)
	a = ask(`{"kind":"jq","program":".rooms[","input":"{}"}`)
	assert.False(t, a.OK)
	assert.NotEmpty(t, a.Error)
	t.Setenv("HARNESS_DEV_PROBE", "from-the-environment")
	a = ask(`{"kind":"jq","program":"$ENV","input":"{}"}`)
	assert.NotContains(t, a.Result+a.Error, "from-the-environment", "a step's jq sees no environment")
	a = ask(`{"kind":"jq","program":"input","input":"{}"}`)
	assert.False(t, a.OK, "a step's jq reads no further input: %s", a.Result)
	a = ask(`{"kind":"jq","program":".","input":"{not json"}`)
	assert.Contains(t, a.Error, "not JSON")
	page := `<ul class=rooms><li><a href=/r/101>101</a></li><li><a href=/r/102> 102 </a></li></ul>`
	b, _ := json.Marshal(map[string]string{"kind": "css", "selector": "ul.rooms a", "input": page})
	a = ask(string(b))
	assert.True(t, a.OK, a.Error)
	assert.Equal(t, `["101","102"]`, a.Result)
	b, _ = json.Marshal(map[string]string{"kind": "css", "selector": "ul.rooms a", "attr": "href", "input": page})
	a = ask(string(b))
	assert.Equal(t, `["/r/101","/r/102"]`, a.Result)
	b, _ = json.Marshal(map[string]string{"kind": "css", "selector": "ul[", "input": page})
	a = ask(string(b))
	assert.False(t, a.OK)
	assert.NotEmpty(t, a.Error)
	a = ask(`{"kind":"xpath","program":"."}`)
	assert.Contains(t, a.Error, "jq or css")
}

// A widget template renders with data: strings are ${ } templates, a
// whole ${ } keeps its type, and item renders once per element of items.
func TestRenderWidget(t *testing.T) {
	tmpl := []byte(`{"type": "list", "title": "食堂人数", "subtitle": "更新于 ${ .updated }", "items": "${ .canteens }", "item": {"title": "${ .name }", "value": "${ .people // \"?\" } 人", "n": "${ .people }"}}`)
	ui, err := devserver.RenderWidget(context.Background(), "widgets/crowd.json", tmpl, map[string]any{
		"updated":  "07:42",
		"canteens": []any{map[string]any{"name": "燕南", "people": 573}, map[string]any{"name": "佟园"}},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"type": "list", "title": "食堂人数", "subtitle": "更新于 07:42", "items": []any{
		map[string]any{"title": "燕南", "value": "573 人", "n": 573},
		map[string]any{"title": "佟园", "value": "? 人", "n": nil},
	}}, ui)
	// an object lists its values in key order; max bounds the items
	ui, err = devserver.RenderWidget(context.Background(), "widgets/m.json", []byte(`{"type": "list", "items": "${ .m }", "max": 2, "item": {"title": "${ . }"}}`),
		map[string]any{"m": map[string]any{"b": "二", "a": "一", "c": "三"}})
	require.NoError(t, err)
	assert.Equal(t, []any{map[string]any{"title": "一"}, map[string]any{"title": "二"}}, ui.(map[string]any)["items"])
	_, err = devserver.RenderWidget(context.Background(), "widgets/x.json", []byte(`{"title": "${ .a[ }"}`), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "widgets/x.json:1:")
	_, err = devserver.RenderWidget(context.Background(), "widgets/x.json", []byte(`{"items": "${ .a }", "item": {"t": "${ . }"}}`), map[string]any{"a": 3})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "items must give a list")
}

// The state shows the document's icon and maxAgentSteps as declared.
func TestStateShowsIconAndMaxAgentSteps(t *testing.T) {
	f := newFixture(t, nil)
	code, body := f.get(t, "api/state")
	require.Equal(t, http.StatusOK, code, body)
	var sv struct {
		Valid         bool   `json:"valid"`
		Icon          string `json:"icon"`
		MaxAgentSteps int    `json:"maxAgentSteps"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &sv))
	assert.True(t, sv.Valid, body)
	assert.Equal(t, "wallet", sv.Icon)
	assert.Equal(t, 6, sv.MaxAgentSteps)
}

// A change to a file of the document is read again and every open page
// hears "reload"; the problems it now has are in the state with their
// positions.
func TestReloadOnChange(t *testing.T) {
	f := newFixture(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.srv.Watch(ctx)
	req, _ := http.NewRequestWithContext(ctx, "GET", f.base+"api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	_, state := f.get(t, "api/state")
	assert.Contains(t, state, `"valid":true`)

	broken := strings.Replace(balanceTool, "{balance: $res.body.balance", "{balance: $nope.body.balance", 1)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "tools/balance.yaml"), []byte(broken), 0o644))
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(5 * time.Second)
	for got := false; !got; {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the stream ended")
			got = l == "event: reload"
		case <-deadline:
			t.Fatal("no reload event within 5 s")
		}
	}
	_, state = f.get(t, "api/state")
	var sv struct {
		Valid    bool `json:"valid"`
		Problems []struct {
			File      string
			Line, Col int
			Text      string
		} `json:"problems"`
	}
	require.NoError(t, json.Unmarshal([]byte(state), &sv))
	assert.False(t, sv.Valid)
	require.NotEmpty(t, sv.Problems)
	assert.Equal(t, "tools/balance.yaml", sv.Problems[0].File)
	assert.Equal(t, 16, sv.Problems[0].Line)
	assert.Contains(t, sv.Problems[0].Text, "tools/balance.yaml:16:")
	assert.Contains(t, sv.Problems[0].Text, "$nope")
}

// The file view serves the document's own files only, and passes them
// through the host's redactor: a secrets file the author keeps inside the
// document's folder (a file of the document, as the reader counts files)
// is shown without its credential, and so is a lint message quoting it.
func TestFileViewServesOnlyDocumentFiles(t *testing.T) {
	f := newFixture(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "secrets.yaml"), []byte("card: {cookies: {JSESSIONID: "+secretCookie+"}}\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "tools/leak.yaml"), []byte("description: "+secretCookie+"\neffect: read\nsteps:\n  - return: '\""+secretCookie+"\" | '\n"), 0o644))
	f.srv.Check()
	code, body := f.get(t, "api/file?name=tools/balance.yaml")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "/api/balance")
	code, body = f.get(t, "api/file?name=secrets.yaml")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "JSESSIONID")
	assert.NotContains(t, body, secretCookie)
	for _, path := range []string{"api/state", "api/file?name=tools/leak.yaml"} {
		code, body = f.get(t, path)
		assert.Equal(t, http.StatusOK, code)
		assert.Contains(t, body, "leak", path)
		assert.NotContains(t, body, secretCookie, path)
	}
	for _, name := range []string{"../secrets.yaml", "/etc/passwd", "tools/../secrets.yaml", "tools"} {
		code, body = f.get(t, "api/file?name="+name)
		assert.Equal(t, http.StatusNotFound, code, name)
		assert.NotContains(t, body, secretCookie)
	}
}

// The document's own test cases run against their recorded exchanges.
func TestRunsTheDocumentsTests(t *testing.T) {
	f := newFixture(t, nil)
	cases := `cases:
  - name: balance in fen
    tool: balance
    input: {unit: fen}
    exchanges:
      - request: {service: card, path: /api/balance, query: {unit: fen}}
        response: {status: 200, json: {balance: 7, owner: me, session: "", query: ""}}
    expect:
      output: {balance: 7, owner: me, echoed: "", header: null}
`
	require.NoError(t, os.MkdirAll(filepath.Join(f.dir, "tests"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "tests/balance.yaml"), []byte(cases), 0o644))
	require.True(t, f.srv.Check())
	code, body := f.post(t, "api/tests", `{}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"ok":true`, body)
	assert.Contains(t, body, "balance in fen")
	_, state := f.get(t, "api/state")
	assert.Contains(t, state, "balance: balance in fen #1: card GET /api/balance", "a recorded response is offered to the scratch pane")
}

// A run is saved as a test case that harness test's runner then passes:
// the case holds the exchanges and the result, never the session of the
// secrets file (though the service echoed it); an existing file is not
// replaced; a refused run, a bad name and an unknown run are not saved.
func TestSaveRunAsTestCase(t *testing.T) {
	f := newFixture(t, nil)
	code, body := f.post(t, "api/run", `{"tool":"balance","input":{"unit":"yuan"}}`)
	require.Equal(t, http.StatusOK, code, body)
	var rec struct {
		ID       string `json:"id"`
		Saveable bool   `json:"saveable"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &rec))
	require.True(t, rec.Saveable, body)
	code, body = f.post(t, "api/save", `{"run":"`+rec.ID+`","file":"tests/balance-yuan.yaml"}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"file":"tests/balance-yuan.yaml"`)
	text, err := os.ReadFile(filepath.Join(f.dir, "tests", "balance-yuan.yaml"))
	require.NoError(t, err)
	assert.NotContains(t, string(text), secretCookie)
	assert.NotContains(t, string(text), secretCookie[:16])
	assert.Contains(t, string(text), "/api/balance")
	rep, err := plugintest.RunDir(context.Background(), f.dir, plugintest.Options{Host: f.host})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)
	require.Len(t, rep.Cases, 1)
	_, state := f.get(t, "api/state")
	assert.Contains(t, state, `"tests/balance-yuan.yaml"`, "the page reloaded with the new file")

	code, body = f.post(t, "api/save", `{"run":"`+rec.ID+`","file":"tests/balance-yuan.yaml"}`)
	assert.Equal(t, http.StatusConflict, code, body)
	assert.Contains(t, body, "exists")
	for _, file := range []string{"balance.yaml", "tests/../x.yaml", "tests/sub/x.yaml", "tests/x.json", "/tmp/x.yaml"} {
		code, body = f.post(t, "api/save", `{"run":"`+rec.ID+`","file":"`+file+`"}`)
		assert.Equal(t, http.StatusBadRequest, code, "%s: %s", file, body)
	}
	code, _ = f.post(t, "api/save", `{"run":"999","file":"tests/x.yaml"}`)
	assert.Equal(t, http.StatusNotFound, code)
	code, body = f.post(t, "api/run", `{"tool":"balance","input":{"unit":"euro"}}`)
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal([]byte(body), &rec))
	assert.False(t, rec.Saveable)
	code, body = f.post(t, "api/save", `{"run":"`+rec.ID+`","file":"tests/bad.yaml"}`)
	assert.Equal(t, http.StatusConflict, code, body)
}

// Only the newest recordings are kept for saving; an older run is refused
// with a message that says so, and the kept runs are bounded.
func TestKeptRunsAreBounded(t *testing.T) {
	f := newFixture(t, nil)
	var ids []string
	for i := 0; i < devserver.MaxKeptRuns+2; i++ {
		code, body := f.post(t, "api/run", `{"tool":"balance","input":{"unit":"fen"}}`)
		require.Equal(t, http.StatusOK, code, body)
		var rec struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(body), &rec))
		ids = append(ids, rec.ID)
	}
	var st struct{ Runs []struct{ ID string } }
	_, state := f.get(t, "api/state")
	require.NoError(t, json.Unmarshal([]byte(state), &st))
	assert.Len(t, st.Runs, devserver.MaxKeptRuns)
	code, body := f.post(t, "api/save", `{"run":"`+ids[0]+`","file":"tests/old.yaml"}`)
	assert.Equal(t, http.StatusNotFound, code, body)
	old := ids[len(ids)-devserver.MaxKeptRecordings-1]
	code, body = f.post(t, "api/save", `{"run":"`+old+`","file":"tests/old.yaml"}`)
	assert.Equal(t, http.StatusConflict, code, body)
	assert.Contains(t, body, "not kept for saving")
	code, body = f.post(t, "api/save", `{"run":"`+ids[len(ids)-devserver.MaxKeptRecordings]+`","file":"tests/kept.yaml"}`)
	assert.Equal(t, http.StatusOK, code, body)
}

// The bare token redirects to the page; anything else without the token
// is not found.
func TestBareTokenRedirects(t *testing.T) {
	f := newFixture(t, nil)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(f.web.URL + "/" + f.srv.Token())
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusPermanentRedirect, resp.StatusCode)
	assert.Equal(t, "/"+f.srv.Token()+"/", resp.Header.Get("Location"))
	resp, err = c.Get(f.web.URL + "/" + f.srv.Token()[1:])
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}
