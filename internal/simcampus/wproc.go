package simcampus

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// wprocHandler serves wproc.pku.edu.cn, the reservation site whose hall 1 is
// the shuttle bus (campus facts §8). Without the session cookie every
// endpoint redirects to /site/login/cas-login, which sends the browser on to
// IAAA.
func (c *Campus) wprocHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /site/reservation/list-page", c.wprocListPage)
	mux.HandleFunc("GET /site/reservation/my-list-time", c.wprocMyList)
	mux.HandleFunc("POST /site/reservation/launch", c.wprocLaunch)
	mux.HandleFunc("POST /site/reservation/single-time-cancel", c.wprocCancel)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case wprocLoginPath:
			if c.wprocCASLogin(w, r) {
				return
			}
			// Without a valid IAAA token: on to IAAA.
			q := url.Values{"appID": {"wproc"}, "appName": {"办事大厅预约版"}, "redirectUrl": {c.origins[Wproc] + wprocLoginPath}}
			http.Redirect(w, r, c.origins[iaaa]+iaaaLoginPath+"?"+q.Encode(), http.StatusFound)
			return
		case "/site/user/auth":
			// The login probe answers rather than redirects (a guess for
			// the logged-out answer).
			writeJSON(w, http.StatusOK, wprocEnv(0, "操作成功", map[string]bool{"is_login": c.cookieOK(r, Wproc, wprocCookie)}))
			return
		}
		if !c.cookieOK(r, Wproc, wprocCookie) {
			back := c.origins[Wproc] + r.URL.RequestURI()
			http.Redirect(w, r, c.origins[Wproc]+wprocLoginPath+"?redirect_url="+url.QueryEscape(back), http.StatusFound)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func wprocEnv(e int, m string, d any) map[string]any {
	return map[string]any{"e": e, "m": m, "d": d}
}

type wprocRoute struct {
	ID               int         `json:"id"`
	Name             string      `json:"name"`
	CampusName       string      `json:"campus_name"`
	NumbersAsStrings bool        `json:"numbersAsStrings"`
	Weekday          []wprocTime `json:"weekday"`
	Weekend          []wprocTime `json:"weekend"`
}

type wprocTime struct {
	Yaxis  string `json:"yaxis"`
	TimeID int    `json:"time_id"`
	Total  int    `json:"total"`
}

type wprocRoutes struct {
	HallID            int          `json:"hall_id"`
	BookableDaysAhead int          `json:"bookableDaysAhead"`
	Routes            []wprocRoute `json:"routes"`
}

type wprocBooking struct {
	ID                    int64             `json:"id"`
	ResourceID            int               `json:"resource_id"`
	ResourceName          string            `json:"resource_name"`
	HallAppointmentDataID int64             `json:"hall_appointment_data_id"`
	StatusName            string            `json:"status_name"`
	IsCancel              int               `json:"is_cancel"`
	PeriodList            []wprocBookPeriod `json:"periodList"`
}

type wprocBookPeriod struct {
	ID   int    `json:"id"`
	Time string `json:"time"`
}

// wprocState is the reservation state: bookings and seats taken (guarded by
// Campus.mu).
type wprocState struct {
	routes   wprocRoutes
	bookings []*wprocBooking
	taken    map[string]int // route/date/time_id -> seats booked here
	nextID   int64
}

func (s *wprocState) init(now time.Time) error {
	decodeFixture("wproc/routes.json", &s.routes)
	if err := renderJSON("wproc/bookings.json.tmpl", now, nil, &s.bookings); err != nil {
		return err
	}
	s.taken = map[string]int{}
	s.nextID = 880100
	return nil
}

func slotKey(route int, date string, timeID int) string {
	return fmt.Sprintf("%d/%s/%d", route, date, timeID)
}

// wprocSlot is one computed timetable cell.
type wprocSlot struct {
	date          time.Time
	t             wprocTime
	margin        int
	status        int
	departure     time.Time
	dateStr, yaxs string
}

// slotsFor computes route r's slots on date d (locked by the caller).
func (c *Campus) slotsFor(r wprocRoute, d time.Time) []wprocSlot {
	now := c.now()
	times := r.Weekday
	if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
		times = r.Weekend
	}
	ds := d.Format("2006-01-02")
	var out []wprocSlot
	for _, t := range times {
		dep, err := time.ParseInLocation("2006-01-02 15:04", ds+" "+t.Yaxis, cst)
		if err != nil {
			continue
		}
		margin := 0
		if t.Total > 0 {
			h := fnv.New32a()
			fmt.Fprintf(h, "%d/%s/%d", r.ID, ds, t.TimeID)
			v := int(h.Sum32() % 100)
			if v >= 15 { // about one run in seven is full
				margin = t.Total * v / 100
			}
			margin = max(0, margin-c.wproc.taken[slotKey(r.ID, ds, t.TimeID)])
		}
		status := 1 // 可预约
		switch {
		case !dep.After(now):
			status = 0 // 已过期
		case t.Total == 0:
			status = 5 // no run: shown as 未开放 (a guess)
		case d.After(day(now, c.wproc.routes.BookableDaysAhead)):
			status = 5 // 未开放
		case margin == 0:
			status = 3 // 已约满
		}
		out = append(out, wprocSlot{date: d, t: t, margin: margin, status: status, departure: dep, dateStr: ds, yaxs: t.Yaxis})
	}
	return out
}

// num renders a count as the route's fixture says: number or string.
func num(n int, asString bool) any {
	if asString {
		return strconv.Itoa(n)
	}
	return n
}

// wprocListPage answers the timetable of the week (Monday to Sunday) that
// holds the date in time (YYYY-MM-DD; default today), optionally one route.
func (c *Campus) wprocListPage(w http.ResponseWriter, r *http.Request) {
	now := c.now()
	d := day(now, 0)
	if s := param(r, "time"); s != "" {
		t, err := time.ParseInLocation("2006-01-02", s, cst)
		if err != nil {
			writeJSON(w, http.StatusOK, wprocEnv(1, "参数错误", []any{})) // guess
			return
		}
		d = t
	}
	monday := d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	if hall := param(r, "hall_id"); hall != "" && hall != strconv.Itoa(c.wproc.routes.HallID) {
		writeJSON(w, http.StatusOK, wprocEnv(0, "操作成功", map[string]any{"list": []any{}}))
		return
	}
	rid := param(r, "resource_id")
	c.mu.Lock()
	defer c.mu.Unlock()
	list := []any{}
	for _, rt := range c.wproc.routes.Routes {
		if rid != "" && rid != strconv.Itoa(rt.ID) {
			continue
		}
		cells := []any{}
		for i := range 7 {
			for _, s := range c.slotsFor(rt, monday.AddDate(0, 0, i)) {
				cells = append(cells, map[string]any{
					"date": s.dateStr, "abscissa": s.dateStr, "yaxis": s.yaxs, "time_id": s.t.TimeID,
					"row": map[string]any{"total": num(s.t.Total, rt.NumbersAsStrings), "margin": num(s.margin, rt.NumbersAsStrings), "status": s.status},
				})
			}
		}
		list = append(list, map[string]any{
			"id": rt.ID, "name": rt.Name, "json_address": map[string]string{"campus_name": rt.CampusName},
			"table": map[string]any{strconv.Itoa(rt.ID): cells},
		})
	}
	writeJSON(w, http.StatusOK, wprocEnv(0, "操作成功", map[string]any{"list": list}))
}

// wprocMyList lists bookings: status 0 booked, 2 checked in, 3 cancelled
// (the mapping of the numbers is a guess); p and page_size page the list.
func (c *Campus) wprocMyList(w http.ResponseWriter, r *http.Request) {
	want := map[string]string{"0": "已预约", "2": "已签到", "3": "已撤销"}[param(r, "status")]
	c.mu.Lock()
	var sel []*wprocBooking
	for _, b := range c.wproc.bookings {
		if want == "" || b.StatusName == want {
			cp := *b
			sel = append(sel, &cp)
		}
	}
	c.mu.Unlock()
	size := intParam(r, "page_size", 10, 100)
	if size == 0 {
		size = 10
	}
	p := max(1, intParam(r, "p", 1, 1<<20))
	out := []*wprocBooking{}
	if s := (p - 1) * size; s < len(sel) {
		out = sel[s:min(len(sel), s+size)]
	}
	writeJSON(w, http.StatusOK, wprocEnv(0, "操作成功", map[string]any{"data": out}))
}

// wprocLaunch books one run: form resource_id and data
// '[{"date":"YYYY-MM-DD","period":<time_id>,"sub_resource_id":0}]'.
// The success payload and the refusal texts are guesses.
func (c *Campus) wprocLaunch(w http.ResponseWriter, r *http.Request) {
	fail := func(m string) { writeJSON(w, http.StatusOK, wprocEnv(1, m, []any{})) }
	rid, err := strconv.Atoi(param(r, "resource_id"))
	var data []struct {
		Date   string `json:"date"`
		Period int    `json:"period"`
	}
	if err != nil || json.Unmarshal([]byte(param(r, "data")), &data) != nil || len(data) != 1 {
		fail("参数错误")
		return
	}
	d, err := time.ParseInLocation("2006-01-02", data[0].Date, cst)
	if err != nil {
		fail("参数错误")
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var route *wprocRoute
	for i := range c.wproc.routes.Routes {
		if c.wproc.routes.Routes[i].ID == rid {
			route = &c.wproc.routes.Routes[i]
		}
	}
	if route == nil {
		fail("预约资源不存在")
		return
	}
	var slot *wprocSlot
	for _, s := range c.slotsFor(*route, d) {
		if s.t.TimeID == data[0].Period {
			slot = &s
		}
	}
	switch {
	case slot == nil || slot.t.Total == 0:
		fail("该时段无班车")
		return
	case slot.status == 0:
		fail("该时段已过期")
		return
	case slot.status == 5:
		fail("该时段未开放预约")
		return
	case slot.status == 3:
		fail("该时段已约满")
		return
	}
	when := slot.dateStr + " " + slot.yaxs
	for _, b := range c.wproc.bookings {
		if b.ResourceID == rid && b.StatusName == "已预约" && len(b.PeriodList) == 1 && b.PeriodList[0].Time == when {
			fail("您已预约该时段")
			return
		}
	}
	c.wproc.nextID++
	b := &wprocBooking{
		ID: c.wproc.nextID, ResourceID: rid, ResourceName: route.Name, HallAppointmentDataID: c.wproc.nextID + 110000,
		StatusName: "已预约", PeriodList: []wprocBookPeriod{{ID: slot.t.TimeID, Time: when}},
	}
	c.wproc.bookings = append([]*wprocBooking{b}, c.wproc.bookings...)
	c.wproc.taken[slotKey(rid, slot.dateStr, slot.t.TimeID)]++
	writeJSON(w, http.StatusOK, wprocEnv(0, "操作成功", map[string]any{"appointment_id": b.ID, "hall_appointment_data_id": b.HallAppointmentDataID}))
}

// wprocCancel cancels a booking: form appointment_id and data_id.
func (c *Campus) wprocCancel(w http.ResponseWriter, r *http.Request) {
	aid, err1 := strconv.ParseInt(param(r, "appointment_id"), 10, 64)
	did, err2 := strconv.ParseInt(param(r, "data_id"), 10, 64)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.wproc.bookings {
		if err1 == nil && err2 == nil && b.ID == aid && b.HallAppointmentDataID == did && b.StatusName == "已预约" {
			b.StatusName, b.IsCancel = "已撤销", 1
			if len(b.PeriodList) == 1 {
				date, _, _ := strings.Cut(b.PeriodList[0].Time, " ")
				k := slotKey(b.ResourceID, date, b.PeriodList[0].ID)
				if c.wproc.taken[k] > 0 {
					c.wproc.taken[k]--
				}
			}
			writeJSON(w, http.StatusOK, wprocEnv(0, "操作成功", []any{}))
			return
		}
	}
	writeJSON(w, http.StatusOK, wprocEnv(1, "预约不存在或不可取消", []any{}))
}
