package plugintest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
)

// Recorder sits on a run's transport (host.Call.Wrap) and keeps every
// exchange as the steps see it: the request as the step made it, before
// the proxy signs it, and the response after the proxy has redacted it.
// Credentials never reach steps, so they never reach a recording. It is
// safe for concurrent use by a call's steps.
type Recorder struct {
	mu  sync.Mutex
	ex  []*recorded
	n   int // requests seen (more than MaxExchanges are counted, not kept)
	cat proxy.Catalogue
}

type recorded struct {
	req  proxy.Request
	resp *proxy.Response
	err  error
	done bool
}

// NewRecorder returns a recorder; cat gives each campus service's login
// signals (nil: proxy.Builtin()), with which a login_required answer is
// written as the response that means it.
func NewRecorder(cat proxy.Catalogue) *Recorder {
	if cat == nil {
		cat = proxy.Builtin()
	}
	return &Recorder{cat: cat}
}

// Wrap is a host.Call's Wrap: the transport that records and passes every
// request on to t.
func (r *Recorder) Wrap(t steps.Transport) steps.Transport { return recTransport{r: r, next: t} }

type recTransport struct {
	r    *Recorder
	next steps.Transport
}

func (t recTransport) Do(ctx context.Context, req *proxy.Request) (*proxy.Response, error) {
	var slot *recorded
	if req != nil {
		slot = t.r.add(req)
	}
	resp, err := t.next.Do(ctx, req)
	if slot != nil {
		t.r.mu.Lock()
		slot.err, slot.done = err, true
		if resp != nil {
			cp := *resp
			cp.Header = resp.Header.Clone()
			cp.Body = bytes.Clone(resp.Body)
			slot.resp = &cp
		}
		t.r.mu.Unlock()
	}
	return resp, err
}

func (r *Recorder) add(req *proxy.Request) *recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if len(r.ex) > MaxExchanges {
		return nil
	}
	x := &recorded{req: *req}
	x.req.Query = cloneValues(req.Query)
	x.req.Header = req.Header.Clone()
	x.req.Body = bytes.Clone(req.Body)
	r.ex = append(r.ex, x)
	return x
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// Exchanges returns the recorded exchanges in the order the requests were
// made, in the test format. A request that failed on the way (other than a
// login the service asked for) cannot be replayed: it is an error, as is a
// run of more than MaxExchanges requests.
func (r *Recorder) Exchanges() ([]*Exchange, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n > MaxExchanges {
		return nil, fmt.Errorf("the run made %d requests; a test case holds at most %d exchanges", r.n, MaxExchanges)
	}
	out := make([]*Exchange, 0, len(r.ex))
	for i, x := range r.ex {
		e, err := r.exchange(x)
		if err != nil {
			return nil, fmt.Errorf("request %d (%s): %v", i+1, describeRequest(&x.req), err)
		}
		out = append(out, e)
	}
	return out, nil
}

// method is a request's method, in upper case (GET when unset).
func method(r *proxy.Request) string { return cmp.Or(strings.ToUpper(r.Method), "GET") }

func describeRequest(r *proxy.Request) string {
	m := method(r)
	if r.Service != "" {
		return m + " " + r.Path + " of " + r.Service
	}
	return m + " " + r.URL
}

func (r *Recorder) exchange(x *recorded) (*Exchange, error) {
	req := &x.req
	e := &Exchange{Method: method(req), Resp: Response{Header: http.Header{}}}
	var rawPath, rawQuery string
	if req.Service != "" {
		e.Service = req.Service
		rawPath, rawQuery, _ = strings.Cut(req.Path, "?")
		if p, err := url.PathUnescape(rawPath); err == nil {
			rawPath = p
		}
	} else {
		u, err := url.Parse(req.URL)
		if err != nil {
			return nil, fmt.Errorf("the URL does not parse: %v", err)
		}
		o, err := manifest.ParseOrigin(u.Scheme + "://" + u.Host)
		if err != nil {
			return nil, fmt.Errorf("the URL's origin: %v", err)
		}
		e.Origin = o.String()
		rawPath, rawQuery = u.Path, u.RawQuery
	}
	if rawPath == "" {
		rawPath = "/"
	}
	e.Path = rawPath
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("the query does not parse: %v", err)
	}
	for k, vs := range req.Query {
		q[k] = append(q[k], vs...)
	}
	if len(q) > 0 {
		e.Query = q
	}
	ct, _, _ := mime.ParseMediaType(req.ContentType)
	switch {
	case len(req.Body) == 0:
	case ct == "application/x-www-form-urlencoded":
		if f, err := url.ParseQuery(string(req.Body)); err == nil {
			e.Form = f
		}
	case ct == "application/json" || strings.HasSuffix(ct, "+json"):
		if v, err := decodeJSON(req.Body); err == nil {
			e.JSON, e.HasJSON = v, true
		}
	}
	if !x.done {
		return nil, errors.New("the request had not ended when the run did")
	}
	if x.err != nil {
		var lr *proxy.LoginRequiredError
		if errors.As(x.err, &lr) && e.Service != "" {
			resp, ok := loginAnswer(r.cat[e.Service])
			if !ok {
				return nil, fmt.Errorf("the service asked for a login, and the catalogue gives %s no login signal to replay it with", e.Service)
			}
			e.Resp = resp
			return e, nil
		}
		return nil, fmt.Errorf("it failed (%v); a test case cannot replay a failed request", x.err)
	}
	resp := x.resp
	e.Resp.Status = resp.Status
	for k, vs := range resp.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Content-Encoding":
			continue
		}
		e.Resp.Header.Set(k, strings.Join(vs, ", "))
	}
	if !resp.Binary {
		e.Resp.Body = resp.Body
		// The body the steps saw is UTF-8 whatever the server sent.
		if mt := e.Resp.Header.Get("Content-Type"); mt != "" {
			base, params, err := mime.ParseMediaType(mt)
			if err == nil && params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8") {
				params["charset"] = "utf-8"
				e.Resp.Header.Set("Content-Type", mime.FormatMediaType(base, params))
			}
		} else if resp.MediaType != "" {
			e.Resp.Header.Set("Content-Type", resp.MediaType+"; charset=utf-8")
		}
	}
	return e, nil
}

// loginAnswer is a response the service's login signals read as an
// expired session: its login status, a redirect to its login, or its JSON
// code.
func loginAnswer(s *proxy.Service) (Response, bool) {
	r := Response{Header: http.Header{}}
	if s == nil {
		return r, false
	}
	l := s.Login
	switch {
	case len(l.Status) > 0:
		r.Status = l.Status[0]
		return r, true
	case l.Redirect != "" || len(l.Redirects) > 0:
		to := l.Redirect
		if to == "" {
			to = l.Redirects[0]
		}
		r.Status = http.StatusFound
		r.Header.Set("Location", to)
		return r, true
	case len(l.JSON) > 0:
		for _, k := range sortedKeys(l.JSON) {
			if len(l.JSON[k]) > 0 {
				r.Status = http.StatusOK
				r.Header.Set("Content-Type", "application/json;charset=UTF-8")
				r.Body, _ = marshal(map[string]any{k: l.JSON[k][0]})
				return r, true
			}
		}
	}
	return r, false
}

// RecordOptions say what a recorded case holds besides the call.
type RecordOptions struct {
	// Name is the case's name (default "recorded TOOL"), without any
	// credential the host knows.
	Name string
	// Actor, Trust, Tainted and Approve are the call's, as the registry
	// decided it (defaults user, community, false, nil).
	Actor   string
	Trust   string
	Tainted bool
	Approve *bool
	// Now is jq's now during the run, written as the case's now (nil: none
	// written). Run the call on a host whose clock stands at it.
	Now *time.Time
	// KV is the plugin's store before the call (a document with the kv
	// ability runs on a store in memory holding these keys; its keys after
	// the call become the case's expect.kv).
	KV map[string]any
}

// Recording is one live call, ready to be written as a test case.
type Recording struct {
	Case *Case
	// Err is the run's failure (nil: it gave a result). A failed run is
	// not written.
	Err error
	// Result is the result's JSON.
	Result []byte
	// redact is the host's redactor (host.Host.Redact): every credential
	// its proxy knows, the sessions refreshed during the run included,
	// becomes proxy.Marker in what is written.
	redact func(string) string
	// identity are the values the host's login knows (the student id and
	// name, a kept second factor): always scrubbed.
	identity []string
	cat      proxy.Catalogue
}

// Record runs one call of a document's tool live on its host, with a
// Recorder on its transport, and returns what a test case needs: the
// exchanges as the steps saw them and the result. A failed run is a
// Recording whose Err is set; an error is a run that cannot be recorded.
func Record(ctx context.Context, doc *host.Document, call host.Call, opts RecordOptions) (*Recording, error) {
	h := doc.Host()
	rec := NewRecorder(h.Catalogue())
	wrap := call.Wrap
	call.Wrap = func(t steps.Transport) steps.Transport {
		if wrap != nil {
			t = wrap(t)
		}
		return rec.Wrap(t)
	}
	var kv *trackKV
	if doc.Plugin().HasAbility("kv") && call.KV == nil {
		kv = &trackKV{set: map[string]bool{}}
		for _, k := range sortedKeys(opts.KV) {
			if err := kv.mem.Set(k, steps.FromGo(normalize(opts.KV[k]))); err != nil {
				return nil, fmt.Errorf("the store's key %q: %v", k, err)
			}
		}
		call.KV = kv
	}
	c := &Case{Name: cmp.Or(h.Redact(opts.Name), "recorded "+call.Tool), Tool: call.Tool, Input: call.Input,
		Actor: cmp.Or(opts.Actor, "user"), Trust: cmp.Or(opts.Trust, "community"),
		Tainted: opts.Tainted, Approve: opts.Approve, Prefs: call.Prefs, Now: opts.Now}
	if c.Input == nil {
		c.Input = map[string]any{}
	}
	if len(opts.KV) > 0 {
		c.KV = opts.KV
	}
	out := &Recording{Case: c, redact: h.Redact, identity: loginValues(h), cat: h.Catalogue()}
	res, err := doc.Run(ctx, call)
	if err != nil {
		out.Err = err
		return out, nil
	}
	if c.Exchanges, err = rec.Exchanges(); err != nil {
		// The message names the request, which a step made from the
		// input and from answers.
		return nil, errors.New(h.Redact(err.Error()))
	}
	out.Result = res.JSON
	v, err := decodeJSON(res.JSON)
	if err != nil {
		return nil, fmt.Errorf("the result is not JSON: %v", err)
	}
	c.Expect.Output, c.Expect.HasOutput = v, true
	if kv != nil && len(kv.set) > 0 {
		c.Expect.KV = map[string]any{}
		for k := range kv.set {
			if c.Expect.KV[k], err = storedJSON(kv, k); err != nil {
				return nil, fmt.Errorf("the store's key %q %v", k, err)
			}
		}
	}
	return out, nil
}

// loginValues lists what the host's campus login knows of the student
// (the keystore's login section: the IAAA user name, the name a hand-off
// reported, a kept TOTP secret), for the recording to scrub.
func loginValues(h *host.Host) []string {
	lk, ok := h.Keystore().(interface{ Login() proxy.LoginInfo })
	if !ok {
		return nil
	}
	li := lk.Login()
	var out []string
	for _, v := range []string{li.User, li.Name, li.TOTP} {
		v = strings.TrimSpace(v)
		if len([]rune(v)) >= MinScrubRunes {
			out = append(out, v)
		}
	}
	return out
}

// trackKV is a store in memory that remembers the keys a call set.
type trackKV struct {
	mu  sync.Mutex
	mem steps.MemKV
	set map[string]bool
}

func (k *trackKV) Get(key string) (any, bool, error) { return k.mem.Get(key) }

func (k *trackKV) Set(key string, v any) error {
	k.mu.Lock()
	k.set[key] = true
	k.mu.Unlock()
	return k.mem.Set(key, v)
}

// jsonBody decodes a recorded body as JSON when its type says JSON.
func jsonBody(r *Response) (any, bool) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, false
	}
	v, err := decodeJSON(r.Body)
	if err != nil {
		return nil, false
	}
	return v, true
}
