package simcampus

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// portalHandler serves portal.pku.edu.cn (campus facts §2, §3B, §4A, §6).
// The free-classroom and notice endpoints need no session; the publicQuery
// "ctrl" endpoints (grades, course table) need the session cookie and
// otherwise redirect to the IAAA login page.
func (c *Campus) portalHandler() http.Handler {
	mux := http.NewServeMux()
	// Each route takes the methods the facts record and answers another
	// with 405 (the real portal's answer to a wrong method is a guess).
	mux.HandleFunc("GET /publicQuery/classroomQuery/retrClassRoomFree.do", c.portalClassrooms)
	mux.HandleFunc("GET /portal2017/publicsearch/classroom/retrClassRoomFree.do", c.portalClassrooms)  // the older path:
	mux.HandleFunc("POST /portal2017/publicsearch/classroom/retrClassRoomFree.do", c.portalClassrooms) // GET or a POST form
	mux.HandleFunc("POST /portal2017/notice/retrAllSchoolNotice.do", c.portalNoticeList("school"))
	mux.HandleFunc("POST /portal2017/notice/retrAllDeptNotice.do", c.portalNoticeList("dept"))
	mux.HandleFunc("POST /portal2017/notice/getSchoolNoticeDetailById.do", c.portalNoticeDetail)
	mux.HandleFunc("POST /portal2017/notice/getDeptNoticeDetailById.do", c.portalNoticeDetail)
	mux.HandleFunc("GET /publicQuery/ctrl/topic/myScore/retrScores.do", c.portalLogin(c.portalScores))
	mux.HandleFunc("GET /publicQuery/ctrl/topic/myCourseTable/getXndXqList.do", c.portalLogin(c.portalTerms))
	mux.HandleFunc("GET /publicQuery/ctrl/topic/myCourseTable/getCourseInfo.do", c.portalLogin(c.portalCourses))
	// The login hand-offs (handoff.go): without a valid token they send
	// the browser to IAAA, as an expired session does.
	c.portalHandoffs(mux)
	// S9: the old bizcenter grades path now answers 404; the mux's 404 does.
	return mux
}

// portalLogin wraps a handler that needs the portal session.
func (c *Campus) portalLogin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !c.cookieOK(r, Portal, portalCookie) {
			c.portalToIAAA(w, r)
			return
		}
		h(w, r)
	}
}

// portalToIAAA answers a request without a valid session: a 302 to the IAAA
// login page with publicQuery's app id and hand-off URL (campus facts §0).
func (c *Campus) portalToIAAA(w http.ResponseWriter, r *http.Request) {
	q := url.Values{}
	q.Set("appID", "portalPublicQuery")
	q.Set("appName", "北京大学校内信息门户")
	q.Set("redirectUrl", c.origins[Portal]+"/publicQuery/ssoLogin.do")
	w.Header().Set("Location", c.origins[iaaa]+iaaaLoginPath+"?"+q.Encode())
	w.WriteHeader(http.StatusFound)
}

func (c *Campus) portalClassrooms(w http.ResponseWriter, r *http.Request) {
	var all map[string]map[string]json.RawMessage
	decodeFixture("portal/classrooms.json", &all)
	body, ok := all[param(r, "buildingName")][param(r, "time")]
	if !ok {
		// guess: an unknown building or day is an empty list, not an error
		body = json.RawMessage(`{"success":true,"results":0,"rows":[]}`)
	}
	writeRaw(w, http.StatusOK, body)
}

type noticeFixture struct {
	School  []json.RawMessage          `json:"school"`
	Dept    []json.RawMessage          `json:"dept"`
	Details map[string]json.RawMessage `json:"details"`
}

func (c *Campus) notices() (*noticeFixture, error) {
	var nf noticeFixture
	if err := renderJSON("portal/notices.json.tmpl", c.now(), nil, &nf); err != nil {
		return nil, err
	}
	return &nf, nil
}

// portalNoticeList answers the notice lists: form keyword (ALL for every
// notice, else a substring of the title), limit and start.
func (c *Campus) portalNoticeList(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		nf, err := c.notices()
		if err != nil {
			fail500(w, err)
			return
		}
		rows := nf.School
		if kind == "dept" {
			rows = nf.Dept
		}
		kw := strings.TrimSpace(param(r, "keyword"))
		var hit []json.RawMessage
		for _, row := range rows {
			var n struct{ Title string }
			json.Unmarshal(row, &n)
			if kw == "" || kw == "ALL" || strings.Contains(n.Title, kw) {
				hit = append(hit, row)
			}
		}
		start := intParam(r, "start", 0, 1<<20)
		limit := intParam(r, "limit", 20, 100)
		page := []json.RawMessage{}
		if start < len(hit) {
			page = hit[start:min(len(hit), start+limit)]
		}
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "results": len(hit), "rows": page})
	}
}

func (c *Campus) portalNoticeDetail(w http.ResponseWriter, r *http.Request) {
	nf, err := c.notices()
	if err != nil {
		fail500(w, err)
		return
	}
	d, ok := nf.Details[param(r, "id")]
	if !ok {
		// guess: the failure shape of an unknown id is not recorded
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "notice": nil})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "notice": d})
}

func (c *Campus) portalScores(w http.ResponseWriter, r *http.Request) {
	writeRaw(w, http.StatusOK, fixture("portal/scores.json"))
}

func (c *Campus) portalTerms(w http.ResponseWriter, r *http.Request) {
	b, err := render("portal/coursetable_terms.json.tmpl", c.now(), nil)
	if err != nil {
		fail500(w, err)
		return
	}
	writeRaw(w, http.StatusOK, b)
}

// portalCourses answers the course table of the current term; any other
// term has no timetable, which the portal reports with success true and a
// message but no course key (campus facts §4A).
func (c *Campus) portalCourses(w http.ResponseWriter, r *http.Request) {
	term := param(r, "xndxq")
	if term == "" {
		term = termOf(c.now())
	}
	if term != termOf(c.now()) {
		writeRaw(w, http.StatusOK, []byte(`{"success":true,"message":"获取个人课表信息失败"}`))
		return
	}
	b, err := render("portal/coursetable.json.tmpl", c.now(), nil)
	if err != nil {
		fail500(w, err)
		return
	}
	writeRaw(w, http.StatusOK, b)
}

// serveIAAA is the IAAA origin: the login page, which is where every
// expired session ends up. It logs nobody in.
