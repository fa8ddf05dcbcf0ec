package simcampus

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// wed is Wednesday 2026-04-15 12:30 in China Standard Time.
var wed = time.Date(2026, 4, 15, 12, 30, 0, 0, cst)

func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

func start(t *testing.T, opts ...Option) *Campus {
	t.Helper()
	c, err := Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// noFollow is a client that shows redirects instead of following them.
var noFollow = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request to service; session attaches the demo session,
// form (when non-nil) is sent urlencoded as a POST.
func do(t *testing.T, c *Campus, service, method, path string, session bool, form url.Values) reply {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.Origin(service)+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if session {
		s := c.Secrets()[service]
		for k, v := range s.Cookies {
			req.AddCookie(&http.Cookie{Name: k, Value: v})
		}
		for k, v := range s.Headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func get(t *testing.T, c *Campus, service, path string, session bool) reply {
	t.Helper()
	return do(t, c, service, http.MethodGet, path, session, nil)
}

func decode[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
	return v
}

func TestServicesAndSecretsFiles(t *testing.T) {
	c := start(t)
	svcs := c.Services()
	for _, n := range ServiceNames {
		e, ok := svcs[n]
		if !ok {
			t.Fatalf("no service %s", n)
		}
		if !strings.HasPrefix(e.Origin, "http://127.0.0.1:") {
			t.Errorf("%s origin %q is not loopback", n, e.Origin)
		}
	}
	// The IAAA is in the file too (for harness login), every path an
	// entry point, so no step reaches it.
	if e, ok := svcs["iaaa"]; !ok || e.Origin != c.Origin("iaaa") || len(e.Entry) != 1 || e.Entry[0] != "/" {
		t.Errorf("iaaa entry %+v, want the IAAA origin with entry [/]", e)
	}
	if len(svcs) != len(ServiceNames)+1 {
		t.Errorf("services %v, want only %v and iaaa", svcs, ServiceNames)
	}
	// The YAML is the CONTRACT shape.
	var file map[string]struct {
		Origin string `yaml:"origin"`
		Auth   struct {
			Cookies []string `yaml:"cookies"`
			Headers []string `yaml:"headers"`
		} `yaml:"auth"`
		Login struct {
			Redirect string `yaml:"redirect"`
		} `yaml:"login"`
	}
	if err := yaml.Unmarshal(c.ServicesYAML(), &file); err != nil {
		t.Fatal(err)
	}
	if got := file["card"].Auth.Headers; len(got) != 1 || got[0] != "synjones-auth" {
		t.Errorf("card auth headers %v", got)
	}
	if file["portal"].Login.Redirect != "/iaaa/oauth.jsp" || file["wproc"].Login.Redirect != "/site/login/cas-login" {
		t.Errorf("login redirects %+v %+v", file["portal"].Login, file["wproc"].Login)
	}
	if file["portal"].Origin != svcs["portal"].Origin {
		t.Errorf("yaml origin %q", file["portal"].Origin)
	}
	var secrets map[string]struct {
		Cookies map[string]string `yaml:"cookies"`
		Headers map[string]string `yaml:"headers"`
	}
	if err := yaml.Unmarshal(c.SecretsYAML(), &secrets); err != nil {
		t.Fatal(err)
	}
	card := secrets["card"].Headers["synjones-auth"]
	if !strings.HasPrefix(card, "bearer ") || strings.Count(card, ".") != 2 {
		t.Errorf("card secret %q is not a bearer JWT", card)
	}
	if !strings.HasPrefix(secrets["treehole"].Headers["Authorization"], "Bearer ") {
		t.Errorf("treehole secret %v", secrets["treehole"])
	}
	for _, n := range []string{"portal", "wproc", "xiaobei"} {
		if len(secrets[n].Cookies) != 1 {
			t.Errorf("%s secret cookies %v", n, secrets[n].Cookies)
		}
	}
	if _, ok := secrets["dean"]; ok {
		t.Error("dean needs no session but has secrets")
	}
	// Fresh values per start; mutating the returned maps changes nothing.
	c2 := start(t)
	if c2.Secrets()["card"].Headers["synjones-auth"] == card {
		t.Error("two campuses share a card session")
	}
	c.Secrets()["card"].Headers["synjones-auth"] = "x"
	if c.Secrets()["card"].Headers["synjones-auth"] != card {
		t.Error("Secrets returned the campus's own map")
	}
}

func TestStartRejectsUnknownOptions(t *testing.T) {
	if _, err := Start(WithExpired("nope")); err == nil {
		t.Error("WithExpired(nope) started")
	}
	if _, err := Start(WithVerification(Card)); err == nil {
		t.Error("WithVerification(card) started")
	}
}

func TestHits(t *testing.T) {
	c := start(t)
	get(t, c, Canteen, "/api/crowd", false)
	get(t, c, Canteen, "/api/crowd", false)
	get(t, c, Dean, "/web/notice.php", false)
	if c.Hits(Canteen) != 2 || c.Hits(Dean) != 1 || c.Hits(Card) != 0 || c.Hits("nope") != 0 {
		t.Errorf("hits canteen %d dean %d card %d", c.Hits(Canteen), c.Hits(Dean), c.Hits(Card))
	}
}

func TestCloseStopsListening(t *testing.T) {
	c, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	origin := c.Origin(Canteen)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if resp, err := noFollow.Get(origin + "/api/crowd"); err == nil {
		resp.Body.Close()
		t.Error("closed campus still answers")
	}
}

// Untrusted input meets limits: an oversized form reads as empty, a bad
// number as the default, unknown paths as 404.
func TestInputLimits(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	big := url.Values{"keyword": {strings.Repeat("x", maxBody)}, "limit": {"2"}}
	r := do(t, c, Portal, http.MethodPost, "/portal2017/notice/retrAllSchoolNotice.do", false, big)
	v := decode[struct {
		Results int   `json:"results"`
		Rows    []any `json:"rows"`
	}](t, r)
	if r.status != 200 || v.Results != 7 || len(v.Rows) != 7 {
		t.Errorf("oversized form: %d %+v", r.status, v)
	}
	odd := do(t, c, Portal, http.MethodPost, "/portal2017/notice/retrAllSchoolNotice.do", false,
		url.Values{"limit": {"-1"}, "start": {"99999999999999999999"}})
	if w := decode[struct{ Rows []any }](t, odd); len(w.Rows) != 0 {
		t.Errorf("start past the end gave %d rows", len(w.Rows))
	}
	if r := do(t, c, Portal, http.MethodPost, "/portal2017/notice/retrAllSchoolNotice.do", false, url.Values{"limit": {"1000"}}); len(decode[struct{ Rows []any }](t, r).Rows) != 7 {
		t.Error("limit 1000")
	}
	for _, svc := range []string{Portal, Dean, Canteen, iaaa} {
		if r := get(t, c, svc, "/nope", false); r.status != 404 {
			t.Errorf("%s /nope: %d", svc, r.status)
		}
	}
}
