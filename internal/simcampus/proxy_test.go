package simcampus_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/simcampus"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
)

// The campus's services and secrets files drive the real proxy: the demo
// session gets data, an expired one becomes login_required on every
// service, whatever way the service signals it.
func TestThroughTheProxy(t *testing.T) {
	now := time.Date(2026, 4, 15, 12, 30, 0, 0, time.FixedZone("CST", 8*3600))
	c, err := simcampus.Start(simcampus.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dir := t.TempDir()
	svcPath, secPath := filepath.Join(dir, "services.yaml"), filepath.Join(dir, "secrets.yaml")
	if err := os.WriteFile(svcPath, c.ServicesYAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secPath, c.SecretsYAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	cat, err := proxy.LoadServices(svcPath)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := proxy.LoadSecrets(secPath)
	if err != nil {
		t.Fatal(err)
	}
	p := proxy.New(proxy.Config{Catalogue: proxy.Builtin().Merge(cat), Keystore: proxy.MemKeystore(secrets)})
	var access manifest.Access
	for _, n := range simcampus.ServiceNames {
		access.Campus = append(access.Campus, manifest.CampusAccess{Service: n})
	}
	ctx := context.Background()
	call := func(service, method, path string, body string) (*proxy.Response, error) {
		t.Helper()
		r := &proxy.Request{Service: service, Path: path, Method: method}
		if body != "" {
			r.Body, r.ContentType = []byte(body), "application/x-www-form-urlencoded"
		}
		return p.NewCall("demo", access).Do(ctx, r)
	}
	values := []string{}
	for _, s := range c.Secrets() {
		for _, v := range s.Cookies {
			values = append(values, v)
		}
		for _, v := range s.Headers {
			values = append(values, v, v[strings.IndexByte(v, ' ')+1:])
		}
	}
	ok := func(service, method, path, body, want string) {
		t.Helper()
		resp, err := call(service, method, path, body)
		if err != nil {
			t.Fatalf("%s %s: %v", service, path, err)
		}
		if resp.Status != 200 || !strings.Contains(string(resp.Body), want) {
			t.Errorf("%s %s: %d %.300s", service, path, resp.Status, resp.Body)
		}
		for _, v := range values {
			if strings.Contains(string(resp.Body), v) {
				t.Errorf("%s %s: a session value in the body", service, path)
			}
		}
	}
	ok("card", "GET", "/berserker-app/ykt/tsm/queryCard?synAccessSource=h5", "", `"daycostamt":1700`)
	ok("portal", "GET", "/publicQuery/ctrl/topic/myScore/retrScores.do", "", `"scoreLists"`)
	ok("portal", "POST", "/portal2017/notice/retrAllSchoolNotice.do", "keyword=ALL&limit=2&start=0", `"Number":"A1B2C3"`)
	ok("treehole", "GET", "/chapi/api/course/score_v2", "", `"code":20000`)
	ok("wproc", "GET", "/site/reservation/list-page?hall_id=1&time=2026-04-15", "", `"e":0`)
	ok("xiaobei", "GET", "/api/api_activity?event_type=lecture&offset=0&limit=1", "", `"activity"`)
	ok("dean", "GET", "/web/notice.php", "", `春季学期选课安排`) // GBK decoded to UTF-8
	ok("canteen", "GET", "/api/crowd", "", `"燕南"`)

	for _, s := range []string{"card", "portal", "treehole", "wproc", "xiaobei"} {
		c.SetExpired(s, true)
	}
	for _, tc := range []struct{ service, path string }{
		{"card", "/berserker-app/ykt/tsm/queryCard?synAccessSource=h5"}, // HTTP 401 + code 401
		{"portal", "/publicQuery/ctrl/topic/myScore/retrScores.do"},     // 302 to IAAA, another origin
		{"treehole", "/chapi/api/v3/events/list"},                       // HTTP 401
		{"wproc", "/site/reservation/my-list-time?p=1"},                 // 302 to /site/login/cas-login
		{"xiaobei", "/api/api_activity?event_type=lecture"},             // HTTP 401
	} {
		_, err := call(tc.service, "GET", tc.path, "")
		var lr *proxy.LoginRequiredError
		if !errors.As(err, &lr) || lr.Service != tc.service {
			t.Errorf("%s expired: %v", tc.service, err)
		}
	}
	// The verification state is data for the document, not an expiry.
	c.SetExpired("treehole", false)
	c.SetVerification(true)
	ok("treehole", "GET", "/chapi/api/course/score_v2", "", `"code":40077`)
	ok("treehole", "GET", "/chapi/api/v3/events/list", "", `"code":40002`)
}
