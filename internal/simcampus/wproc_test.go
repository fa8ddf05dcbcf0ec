package simcampus

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

type wprocEnvT[T any] struct {
	E int    `json:"e"`
	M string `json:"m"`
	D T      `json:"d"`
}

type wprocList struct {
	List []struct {
		ID          int    `json:"id"`
		Name        string `json:"name"`
		JSONAddress struct {
			CampusName string `json:"campus_name"`
		} `json:"json_address"`
		Table map[string][]struct {
			Date     string `json:"date"`
			Abscissa string `json:"abscissa"`
			Yaxis    string `json:"yaxis"`
			TimeID   int    `json:"time_id"`
			Row      struct {
				Total  json.RawMessage `json:"total"`
				Margin json.RawMessage `json:"margin"`
				Status int             `json:"status"`
			} `json:"row"`
		} `json:"table"`
	} `json:"list"`
}

func listPage(t *testing.T, c *Campus, query string) wprocEnvT[wprocList] {
	t.Helper()
	return decode[wprocEnvT[wprocList]](t, get(t, c, Wproc, "/site/reservation/list-page?"+query, true))
}

func TestWprocTimetableWeek(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	v := listPage(t, c, "hall_id=1&time=2026-04-13&p=1&page_size=0") // the Monday
	if v.E != 0 || v.M != "操作成功" || len(v.D.List) != 3 {
		t.Fatalf("%+v", v)
	}
	r7 := v.D.List[0]
	if r7.ID != 7 || r7.Name != "燕园校区→新燕园校区" || r7.JSONAddress.CampusName != "燕园校区" {
		t.Errorf("route %+v", r7)
	}
	slots := r7.Table["7"]
	if len(slots) != 5*5+2*2 {
		t.Fatalf("route 7 has %d slots in the week", len(slots))
	}
	if slots[0].Date != "2026-04-13" || slots[0].Abscissa != "2026-04-13" || slots[len(slots)-1].Date != "2026-04-19" {
		t.Errorf("week %s .. %s", slots[0].Date, slots[len(slots)-1].Date)
	}
	statuses := map[int]int{}
	for _, s := range slots {
		statuses[s.Row.Status]++
		when := s.Date + " " + s.Yaxis
		switch {
		case when <= "2026-04-15 12:30" && s.Row.Status != 0:
			t.Errorf("past run %s has status %d", when, s.Row.Status)
		case when > "2026-04-15 12:30" && s.Row.Status == 0:
			t.Errorf("future run %s is expired", when)
		case s.Date > "2026-04-17" && s.Row.Status != 5:
			t.Errorf("run %s beyond the booking window has status %d", when, s.Row.Status)
		}
		if string(s.Row.Total) == "0" && s.Row.Status == 1 {
			t.Errorf("no-run slot %s is bookable", when)
		}
	}
	if statuses[1] == 0 || statuses[0] == 0 || statuses[5] == 0 {
		t.Errorf("statuses %v", statuses)
	}
	// Route 4 writes its numbers as strings; route 2 has no weekend runs.
	r4 := v.D.List[1].Table["4"]
	if !strings.HasPrefix(string(r4[0].Row.Total), `"`) || !strings.HasPrefix(string(r4[0].Row.Margin), `"`) {
		t.Errorf("route 4 numbers %s %s", r4[0].Row.Total, r4[0].Row.Margin)
	}
	if n := len(v.D.List[2].Table["2"]); n != 5*2 {
		t.Errorf("route 2 has %d slots", n)
	}
	// Any day of the week gives the same week; resource_id narrows.
	one := listPage(t, c, "hall_id=1&time=2026-04-18&resource_id=4")
	if len(one.D.List) != 1 || one.D.List[0].ID != 4 || one.D.List[0].Table["4"][0].Date != "2026-04-13" {
		t.Errorf("resource_id=4 %+v", one.D.List)
	}
	// Without time: this week.
	now := listPage(t, c, "hall_id=1")
	if now.D.List[0].Table["7"][0].Date != "2026-04-13" {
		t.Errorf("default week starts %s", now.D.List[0].Table["7"][0].Date)
	}
	if bad := decode[wprocEnvT[any]](t, get(t, c, Wproc, "/site/reservation/list-page?hall_id=1&time=tomorrow", true)); bad.E == 0 || bad.M == "" {
		t.Errorf("bad time %+v", bad)
	}
}

func TestWprocBookAndCancel(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	// Find a bookable run and its margin.
	v := listPage(t, c, "hall_id=1&time=2026-04-15&resource_id=7")
	var date string
	var timeID, margin int
	for _, s := range v.D.List[0].Table["7"] {
		if s.Row.Status == 1 {
			date, timeID = s.Date, s.TimeID
			json.Unmarshal(s.Row.Margin, &margin)
			break
		}
	}
	if date == "" {
		t.Fatal("no bookable run")
	}
	launch := func(rid int, d string, period int) wprocEnvT[any] {
		t.Helper()
		data := fmt.Sprintf(`[{"date":%q,"period":%d,"sub_resource_id":0}]`, d, period)
		f := url.Values{"resource_id": {fmt.Sprint(rid)}, "code": {""}, "remarks": {""}, "deduct_num": {""}, "data": {data}}
		return decode[wprocEnvT[any]](t, do(t, c, Wproc, http.MethodPost, "/site/reservation/launch", true, f))
	}
	lr := launch(7, date, timeID)
	b := decode[wprocEnvT[map[string]int64]](t, reply{body: mustJSON(t, lr)})
	if b.E != 0 || b.D["appointment_id"] == 0 {
		t.Fatalf("launch %+v", b)
	}
	again := decode[wprocEnvT[any]](t, do(t, c, Wproc, http.MethodPost, "/site/reservation/launch", true, url.Values{
		"resource_id": {"7"}, "data": {fmt.Sprintf(`[{"date":%q,"period":%d,"sub_resource_id":0}]`, date, timeID)},
	}))
	if again.E == 0 || again.M == "" {
		t.Errorf("double booking %+v", again)
	}
	after := listPage(t, c, "hall_id=1&time="+date+"&resource_id=7")
	for _, s := range after.D.List[0].Table["7"] {
		if s.Date == date && s.TimeID == timeID {
			var m int
			json.Unmarshal(s.Row.Margin, &m)
			if m != margin-1 {
				t.Errorf("margin %d after booking, was %d", m, margin)
			}
		}
	}
	type myList struct {
		Data []wprocBooking `json:"data"`
	}
	mine := decode[wprocEnvT[myList]](t, get(t, c, Wproc, "/site/reservation/my-list-time?p=1&page_size=10&status=0&sort_time=true&sort=asc", true))
	if len(mine.D.Data) != 2 || mine.D.Data[0].ID != b.D["appointment_id"] || mine.D.Data[0].StatusName != "已预约" {
		t.Fatalf("my bookings %+v", mine.D.Data)
	}
	if p := mine.D.Data[0].PeriodList; len(p) != 1 || p[0].ID != timeID || !strings.HasPrefix(p[0].Time, date+" ") {
		t.Errorf("periodList %+v", p)
	}
	all := decode[wprocEnvT[myList]](t, get(t, c, Wproc, "/site/reservation/my-list-time?p=1&page_size=10", true))
	if len(all.D.Data) != 4 {
		t.Errorf("all bookings %d", len(all.D.Data))
	}
	// Refusals: past, beyond the window, unknown route, bad data.
	if r := launch(7, "2026-04-15", 41); r.E == 0 || r.M != "该时段已过期" {
		t.Errorf("past run %+v", r)
	}
	if r := launch(7, "2026-04-20", 41); r.E == 0 || r.M != "该时段未开放预约" {
		t.Errorf("not yet open %+v", r)
	}
	if r := launch(99, date, timeID); r.E == 0 {
		t.Errorf("unknown route %+v", r)
	}
	if r := decode[wprocEnvT[any]](t, do(t, c, Wproc, http.MethodPost, "/site/reservation/launch", true, url.Values{"resource_id": {"7"}, "data": {"{"}})); r.E == 0 {
		t.Errorf("bad data %+v", r)
	}
	// Cancel gives the seat back.
	cancel := url.Values{"appointment_id": {fmt.Sprint(b.D["appointment_id"])}, "data_id": {fmt.Sprint(b.D["hall_appointment_data_id"])}}
	if r := decode[wprocEnvT[any]](t, do(t, c, Wproc, http.MethodPost, "/site/reservation/single-time-cancel", true, cancel)); r.E != 0 {
		t.Errorf("cancel %+v", r)
	}
	if r := decode[wprocEnvT[any]](t, do(t, c, Wproc, http.MethodPost, "/site/reservation/single-time-cancel", true, cancel)); r.E == 0 {
		t.Errorf("second cancel %+v", r)
	}
	back := listPage(t, c, "hall_id=1&time="+date+"&resource_id=7")
	for _, s := range back.D.List[0].Table["7"] {
		if s.Date == date && s.TimeID == timeID {
			var m int
			json.Unmarshal(s.Row.Margin, &m)
			if m != margin {
				t.Errorf("margin %d after cancel, want %d", m, margin)
			}
		}
	}
	// A GET cannot book.
	if r := get(t, c, Wproc, "/site/reservation/launch?resource_id=7", true); r.status != http.StatusMethodNotAllowed {
		t.Errorf("GET launch %d", r.status)
	}
}

func TestWprocExpiry(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	const path = "/site/reservation/list-page?hall_id=1&time=2026-04-13"
	checkAt := func(name string, r reply, path string) {
		t.Helper()
		loc, err := url.Parse(r.header.Get("Location"))
		if r.status != http.StatusFound || err != nil {
			t.Fatalf("%s: %d %v", name, r.status, err)
		}
		if "http://"+loc.Host != c.Origin(Wproc) || loc.Path != "/site/login/cas-login" || loc.Query().Get("redirect_url") != c.Origin(Wproc)+path {
			t.Errorf("%s: Location %s", name, loc)
		}
	}
	check := func(name string, r reply) {
		t.Helper()
		checkAt(name, r, path)
	}
	check("missing", get(t, c, Wproc, path, false))
	req, _ := http.NewRequest("GET", c.Origin(Wproc)+path, nil)
	req.AddCookie(&http.Cookie{Name: "PHPSESSID", Value: c.Secrets()[Portal].Cookies["JSESSIONID"]})
	check("portal's value", doReq(t, req))
	checkAt("launch", do(t, c, Wproc, http.MethodPost, "/site/reservation/launch", false, url.Values{"resource_id": {"7"}}), "/site/reservation/launch")
	// cas-login without a token goes on to IAAA.
	r := get(t, c, Wproc, "/site/login/cas-login?redirect_url=x", false)
	loc, _ := url.Parse(r.header.Get("Location"))
	if r.status != http.StatusFound || "http://"+loc.Host != c.Origin(iaaa) || loc.Query().Get("appID") != "wproc" {
		t.Errorf("cas-login: %d %s", r.status, loc)
	}
	// The probe answers either way.
	auth := func(session bool) bool {
		v := decode[wprocEnvT[map[string]bool]](t, get(t, c, Wproc, "/site/user/auth", session))
		return v.D["is_login"]
	}
	if !auth(true) || auth(false) {
		t.Error("login probe")
	}
	c.SetExpired(Wproc, true)
	check("expired", get(t, c, Wproc, path, true))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
