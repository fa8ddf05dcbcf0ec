package simcampus

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestPortalClassroomsNeedNoLogin(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	q := url.Values{"buildingName": {"一教"}, "time": {"今天"}}
	r := get(t, c, Portal, "/publicQuery/classroomQuery/retrClassRoomFree.do?"+q.Encode(), false)
	type rows struct {
		Success bool                `json:"success"`
		Results int                 `json:"results"`
		Rows    []map[string]string `json:"rows"` // all values are strings
	}
	v := decode[rows](t, r)
	if r.status != 200 || !v.Success || v.Results != len(v.Rows) || len(v.Rows) == 0 {
		t.Fatalf("status %d %+v", r.status, v)
	}
	first := v.Rows[0]
	if first["room"] != "101" || first["cap"] != "221" || first["c1"] != "占用" || first["c3"] != "" {
		t.Errorf("first row %v", first)
	}
	// The older path answers the same.
	old := get(t, c, Portal, "/portal2017/publicsearch/classroom/retrClassRoomFree.do?"+q.Encode(), false)
	if string(old.body) != string(r.body) {
		t.Error("the older path answers differently")
	}
	// An empty day.
	q = url.Values{"buildingName": {"文史"}, "time": {"后天"}}
	e := decode[rows](t, get(t, c, Portal, "/publicQuery/classroomQuery/retrClassRoomFree.do?"+q.Encode(), false))
	if !e.Success || e.Results != 0 || e.Rows == nil || len(e.Rows) != 0 {
		t.Errorf("empty day %+v", e)
	}
	// A row with missing fields.
	q = url.Values{"buildingName": {"二教"}, "time": {"明天"}}
	m := decode[rows](t, get(t, c, Portal, "/publicQuery/classroomQuery/retrClassRoomFree.do?"+q.Encode(), false))
	if _, ok := m.Rows[2]["c12"]; ok {
		t.Errorf("二教 明天 row 3 should miss c12: %v", m.Rows[2])
	}
}

func TestPortalNotices(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	type list struct {
		Success bool                `json:"success"`
		Results int                 `json:"results"`
		Rows    []map[string]string `json:"rows"`
	}
	r := do(t, c, Portal, http.MethodPost, "/portal2017/notice/retrAllSchoolNotice.do", false,
		url.Values{"keyword": {"ALL"}, "limit": {"3"}, "start": {"0"}})
	v := decode[list](t, r)
	if !v.Success || v.Results != 7 || len(v.Rows) != 3 {
		t.Fatalf("%+v", v)
	}
	top := v.Rows[0]
	for _, k := range []string{"Number", "Title", "Time", "Department", "Type", "DocUrl"} {
		if _, ok := top[k]; !ok {
			t.Errorf("notice lacks capitalised key %s: %v", k, top)
		}
	}
	if top["Time"] != "2026-04-15 09:30:00" || !strings.Contains(top["Title"], "２０２６") {
		t.Errorf("top notice %v", top)
	}
	// Paging and keyword.
	p := decode[list](t, do(t, c, Portal, http.MethodPost, "/portal2017/notice/retrAllSchoolNotice.do", false,
		url.Values{"keyword": {"ALL"}, "limit": {"3"}, "start": {"6"}}))
	if p.Results != 7 || len(p.Rows) != 1 {
		t.Errorf("last page %+v", p)
	}
	k := decode[list](t, do(t, c, Portal, http.MethodPost, "/portal2017/notice/retrAllSchoolNotice.do", false,
		url.Values{"keyword": {"班车"}, "limit": {"20"}, "start": {"0"}}))
	if k.Results != 1 || k.Rows[0]["Number"] != "R7S8T9" {
		t.Errorf("keyword %+v", k)
	}
	d := decode[list](t, do(t, c, Portal, http.MethodPost, "/portal2017/notice/retrAllDeptNotice.do", false,
		url.Values{"keyword": {"ALL"}, "limit": {"20"}, "start": {"0"}}))
	if d.Results != 2 {
		t.Errorf("dept notices %+v", d)
	}
	type detail struct {
		Success bool `json:"success"`
		Notice  *struct {
			NoticeContent string `json:"noticeContent"`
			FileName      string `json:"fileName"`
			FileNo        string `json:"fileNo"`
		} `json:"notice"`
	}
	det := decode[detail](t, do(t, c, Portal, http.MethodPost, "/portal2017/notice/getSchoolNoticeDetailById.do", false, url.Values{"id": {"A1B2C3"}}))
	if !det.Success || det.Notice == nil || !strings.Contains(det.Notice.NoticeContent, "2026年4月15日") || det.Notice.FileName != "值班表.xlsx" {
		t.Errorf("detail %+v", det)
	}
	if !strings.Contains(string(do(t, c, Portal, http.MethodPost, "/portal2017/notice/getSchoolNoticeDetailById.do", false, url.Values{"id": {"A1B2C3"}}).body), "<p>") {
		t.Error("detail html is escaped")
	}
	none := decode[detail](t, do(t, c, Portal, http.MethodPost, "/portal2017/notice/getSchoolNoticeDetailById.do", false, url.Values{"id": {"nope"}}))
	if none.Success || none.Notice != nil {
		t.Errorf("unknown id %+v", none)
	}
}

func TestPortalGradesNeedSession(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	const path = "/publicQuery/ctrl/topic/myScore/retrScores.do"
	r := get(t, c, Portal, path, true)
	type scores struct {
		Success    bool                `json:"success"`
		Xh         string              `json:"xh"`
		Xslb       string              `json:"xslb"`
		ScoreLists []map[string]string `json:"scoreLists"`
	}
	v := decode[scores](t, r)
	if !v.Success || v.Xh == "" || len(v.ScoreLists) < 5 {
		t.Fatalf("%+v", v)
	}
	if s := v.ScoreLists[0]; s["cj"] != "88" || s["xf"] != "3" || s["xnd"] != "25-26" {
		t.Errorf("first score %v", s)
	}
	// Missing and wrong sessions get the IAAA login redirect.
	for name, session := range map[string]bool{"missing": false} {
		assertIAAA(t, c, get(t, c, Portal, path, session), name)
	}
	req, _ := http.NewRequest("GET", c.Origin(Portal)+path, nil)
	req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: "WRONG"})
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	assertIAAA(t, c, reply{status: resp.StatusCode, header: resp.Header}, "wrong")
	// The cookie of another service is no portal session.
	req, _ = http.NewRequest("GET", c.Origin(Portal)+path, nil)
	req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: c.Secrets()[Wproc].Cookies["PHPSESSID"]})
	resp, err = noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	assertIAAA(t, c, reply{status: resp.StatusCode, header: resp.Header}, "wproc's value")

	// The login page itself.
	page := get(t, c, iaaa, "/iaaa/oauth.jsp?appID=portalPublicQuery", false)
	if page.status != 200 || !strings.Contains(string(page.body), "统一身份认证") {
		t.Errorf("iaaa page %d", page.status)
	}
	// S9: the old bizcenter path is gone.
	if r := get(t, c, Portal, "/portal2017/bizcenter/score/retrScores.do", true); r.status != 404 {
		t.Errorf("bizcenter answered %d", r.status)
	}
}

func TestPortalExpired(t *testing.T) {
	c := start(t, WithClock(fixed(wed)), WithExpired(Portal))
	assertIAAA(t, c, get(t, c, Portal, "/publicQuery/ctrl/topic/myCourseTable/getXndXqList.do", true), "expired")
	// Public endpoints still answer.
	if r := get(t, c, Portal, "/publicQuery/classroomQuery/retrClassRoomFree.do?buildingName=%E4%B8%80%E6%95%99&time=%E4%BB%8A%E5%A4%A9", true); r.status != 200 {
		t.Errorf("classrooms while expired: %d", r.status)
	}
	c.SetExpired(Portal, false)
	if r := get(t, c, Portal, "/publicQuery/ctrl/topic/myCourseTable/getXndXqList.do", true); r.status != 200 {
		t.Errorf("after SetExpired(false): %d", r.status)
	}
}

func assertIAAA(t *testing.T, c *Campus, r reply, name string) {
	t.Helper()
	if r.status != http.StatusFound {
		t.Fatalf("%s session: status %d, want 302", name, r.status)
	}
	loc, err := url.Parse(r.header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if "http://"+loc.Host != c.Origin(iaaa) || loc.Path != "/iaaa/oauth.jsp" || loc.Query().Get("appID") != "portalPublicQuery" {
		t.Errorf("%s session: Location %s", name, loc)
	}
	if !strings.HasPrefix(loc.Query().Get("redirectUrl"), c.Origin(Portal)+"/publicQuery/ssoLogin.do") {
		t.Errorf("%s session: redirectUrl %q", name, loc.Query().Get("redirectUrl"))
	}
}

func TestPortalCourseTable(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	type terms struct {
		Success bool `json:"success"`
		Now     struct {
			Xndxq string `json:"xndxq"`
		} `json:"nowXnxq"`
		List []struct {
			Xndxq      string `json:"xndxq"`
			XndxqValue string `json:"xndxqValue"`
		} `json:"xndxq"`
	}
	tv := decode[terms](t, get(t, c, Portal, "/publicQuery/ctrl/topic/myCourseTable/getXndXqList.do", true))
	if tv.Now.Xndxq != "25-26-2" || len(tv.List) != 3 || tv.List[0].XndxqValue != "25-26学年2学期" || tv.List[1].Xndxq != "25-26-1" || tv.List[2].Xndxq != "24-25-3" {
		t.Fatalf("terms %+v", tv)
	}
	type table struct {
		Success bool             `json:"success"`
		Message string           `json:"message"`
		Course  []map[string]any `json:"course"`
		Remark  string           `json:"remark"`
	}
	v := decode[table](t, get(t, c, Portal, "/publicQuery/ctrl/topic/myCourseTable/getCourseInfo.do?xndxq=25-26-2", true))
	if !v.Success || len(v.Course) != 12 || v.Course[0]["timeNum"] != "第一节" || v.Course[11]["timeNum"] != "第十二节" {
		t.Fatalf("table %d rows", len(v.Course))
	}
	tue, _ := v.Course[0]["tue"].(map[string]any)
	if name, _ := tue["courseName"].(string); !strings.Contains(name, "(主)<br>上课信息：") || !strings.Contains(name, "考试信息：20260530") {
		t.Errorf("tue period 1 %v", tue)
	}
	if !strings.HasPrefix(v.Remark, "未在下面显示的课程还有：") {
		t.Errorf("remark %q", v.Remark)
	}
	// A term without a timetable: success, a message, no course key.
	r := get(t, c, Portal, "/publicQuery/ctrl/topic/myCourseTable/getCourseInfo.do?xndxq=24-25-3", true)
	raw := decode[map[string]any](t, r)
	if _, ok := raw["course"]; ok || raw["message"] != "获取个人课表信息失败" || raw["success"] != true {
		t.Errorf("empty term %v", raw)
	}
}

// TestPortalMethodsAreTheFacts: each portal route answers the method the
// facts record (§2: the classroom query by GET, the older path by GET or a
// POST form; §6: the notices by POST form; §3B, §4A: the ctrl topics by
// GET) and refuses another with 405, so a tool sending the wrong method
// fails here as it would on the real portal.
func TestPortalMethodsAreTheFacts(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	q := url.Values{"buildingName": {"一教"}, "time": {"今天"}}
	for _, tc := range []struct {
		method, path string
		form         url.Values
		session      bool
		want         int
	}{
		{http.MethodGet, "/publicQuery/classroomQuery/retrClassRoomFree.do?" + q.Encode(), nil, false, 200},
		{http.MethodPost, "/publicQuery/classroomQuery/retrClassRoomFree.do", q, false, 405},
		{http.MethodGet, "/portal2017/publicsearch/classroom/retrClassRoomFree.do?" + q.Encode(), nil, false, 200},
		{http.MethodPost, "/portal2017/publicsearch/classroom/retrClassRoomFree.do", q, false, 200},
		{http.MethodPost, "/portal2017/notice/retrAllSchoolNotice.do", url.Values{"keyword": {"ALL"}, "limit": {"20"}, "start": {"0"}}, false, 200},
		{http.MethodGet, "/portal2017/notice/retrAllSchoolNotice.do?keyword=ALL&limit=20&start=0", nil, false, 405},
		{http.MethodGet, "/portal2017/notice/retrAllDeptNotice.do?keyword=ALL", nil, false, 405},
		{http.MethodPost, "/portal2017/notice/getSchoolNoticeDetailById.do", url.Values{"id": {"A1B2C3"}}, false, 200},
		{http.MethodGet, "/portal2017/notice/getSchoolNoticeDetailById.do?id=A1B2C3", nil, false, 405},
		{http.MethodGet, "/portal2017/notice/getDeptNoticeDetailById.do?id=A1B2C3", nil, false, 405},
		{http.MethodGet, "/publicQuery/ctrl/topic/myScore/retrScores.do", nil, true, 200},
		{http.MethodPost, "/publicQuery/ctrl/topic/myScore/retrScores.do", url.Values{}, true, 405},
		{http.MethodPost, "/publicQuery/ctrl/topic/myCourseTable/getXndXqList.do", url.Values{}, true, 405},
		{http.MethodPost, "/publicQuery/ctrl/topic/myCourseTable/getCourseInfo.do", url.Values{"xndxq": {"25-26-2"}}, true, 405},
	} {
		if r := do(t, c, Portal, tc.method, tc.path, tc.session, tc.form); r.status != tc.want {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, r.status, tc.want)
		}
	}
}
