package simcampus

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/text/encoding/simplifiedchinese"
)

func TestXiaobeiActivity(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	type act struct {
		Activity []map[string]string `json:"activity"`
	}
	v := decode[act](t, get(t, c, Xiaobei, "/api/api_activity?event_type=lecture&offset=0&limit=10", true))
	if len(v.Activity) != 4 {
		t.Fatalf("%+v", v)
	}
	first := v.Activity[0]
	if first["start_time"] != "Wed, 15 Apr 2026 19:00:00 GMT" || first["event_location"] != "理教101" {
		t.Errorf("first %v", first)
	}
	if _, err := time.Parse(time.RFC1123, first["start_time"]); err != nil {
		t.Errorf("start_time is not RFC 2822: %v", err)
	}
	var noURL bool
	for _, a := range v.Activity {
		if _, ok := a["url"]; !ok {
			noURL = true
		}
	}
	if !noURL {
		t.Error("no activity misses url (an awkward case)")
	}
	if p := decode[act](t, get(t, c, Xiaobei, "/api/api_activity?event_type=lecture&offset=3&limit=10", true)); len(p.Activity) != 1 {
		t.Errorf("offset 3: %d", len(p.Activity))
	}
	if o := decode[act](t, get(t, c, Xiaobei, "/api/api_activity?event_type=other&offset=0&limit=10", true)); o.Activity == nil || len(o.Activity) != 0 {
		t.Errorf("other %+v", o)
	}
	for name, r := range map[string]reply{
		"missing": get(t, c, Xiaobei, "/api/api_activity?event_type=lecture", false),
	} {
		if r.status != http.StatusUnauthorized {
			t.Errorf("%s: %d", name, r.status)
		}
	}
	req, _ := http.NewRequest("GET", c.Origin(Xiaobei)+"/api/api_activity?event_type=lecture", nil)
	req.AddCookie(&http.Cookie{Name: "session", Value: ".forged"})
	if r := doReq(t, req); r.status != http.StatusUnauthorized {
		t.Errorf("forged: %d", r.status)
	}
}

func TestDeanNoticesAreGBK(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	r := get(t, c, Dean, "/web/notice.php", false)
	if r.status != 200 || r.header.Get("Content-Type") != "text/html; charset=gbk" {
		t.Fatalf("%d %q", r.status, r.header.Get("Content-Type"))
	}
	if utf8.Valid(r.body) {
		t.Fatal("the page is valid UTF-8: not GBK")
	}
	if strings.Contains(string(r.body), "通知") {
		t.Fatal("UTF-8 text inside the GBK page")
	}
	html, err := simplifiedchinese.GBK.NewDecoder().Bytes(r.body)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(html)))
	if err != nil {
		t.Fatal(err)
	}
	items := doc.Find("div.notice_item")
	if items.Length() != 5 {
		t.Fatalf("%d notice items", items.Length())
	}
	first := items.First()
	if d := first.Find("span").Text(); d != "2026-04-15" {
		t.Errorf("first date %q", d)
	}
	a := first.Find(`a[href^="notice_details.php?id="]`)
	if href, _ := a.Attr("href"); href != "notice_details.php?id=1321" || !strings.Contains(a.Text(), "２０２６年春季学期") {
		t.Errorf("first link %q %q", href, a.Text())
	}
	if d := items.Eq(3).Find("span").Text(); d != "" {
		t.Errorf("the undated item has %q", d)
	}
	// The detail page: GBK too, a Chinese date with full-width digits.
	d := get(t, c, Dean, "/web/notice_details.php?id=1321", false)
	dh, err := simplifiedchinese.GBK.NewDecoder().Bytes(d.body)
	if err != nil || d.header.Get("Content-Type") != "text/html; charset=gbk" {
		t.Fatal(err, d.header)
	}
	dd, _ := goquery.NewDocumentFromReader(strings.NewReader(string(dh)))
	if box := dd.Find(".newsinfo_box").Text(); !strings.Contains(box, "２０２６年４月２０日") {
		t.Errorf("detail box %q", box)
	}
	if date := dd.Find(".newsinfo_date").Text(); !strings.Contains(date, "２０２６年４月１５日") {
		t.Errorf("detail date %q", date)
	}
	if r := get(t, c, Dean, "/web/notice_details.php?id=9", false); r.status != 404 {
		t.Errorf("unknown notice %d", r.status)
	}
}

func TestCanteenCrowdFollowsTheClock(t *testing.T) {
	type crowd struct {
		Updated  string           `json:"updated"`
		Canteens []map[string]any `json:"canteens"`
	}
	lunch := start(t, WithClock(fixed(time.Date(2026, 4, 15, 12, 0, 0, 0, cst))))
	v := decode[crowd](t, get(t, lunch, Canteen, "/api/crowd", false))
	if v.Updated != "2026-04-15 12:00" || len(v.Canteens) != 8 {
		t.Fatalf("%+v", v)
	}
	byName := map[string]map[string]any{}
	for _, c := range v.Canteens {
		byName[c["name"].(string)] = c
	}
	for _, n := range []string{"燕南", "家园", "农园", "学一", "学五", "松林", "佟园"} {
		c := byName[n]
		if c == nil || c["open"] != true || c["current"].(float64) <= 0 {
			t.Errorf("%s at noon: %v", n, c)
		}
	}
	if _, ok := byName["佟园"]["capacity"]; ok {
		t.Error("佟园 has a capacity (its capacity is the missing field)")
	}
	if byName["新勺园"]["open"] != false || byName["新勺园"]["current"].(float64) != 0 {
		t.Errorf("新勺园 %v", byName["新勺园"])
	}
	if cur, cp := byName["燕南"]["current"].(float64), byName["燕南"]["capacity"].(float64); cur > cp {
		t.Errorf("燕南 %v of %v", cur, cp)
	}
	night := start(t, WithClock(fixed(time.Date(2026, 4, 15, 3, 0, 0, 0, cst))))
	n := decode[crowd](t, get(t, night, Canteen, "/api/crowd?name=燕南", false))
	if len(n.Canteens) != 1 || n.Canteens[0]["open"] != false || n.Canteens[0]["current"].(float64) != 0 {
		t.Errorf("燕南 at 3:00 %v", n.Canteens)
	}
	// The same minute gives the same numbers.
	again := decode[crowd](t, get(t, lunch, Canteen, "/api/crowd?name=yannan", false))
	if again.Canteens[0]["current"] != byName["燕南"]["current"] {
		t.Error("crowd is not deterministic")
	}
}
