package simcampus

import (
	"net/http"
	"strings"
	"testing"
)

type holeEnv[T any] struct {
	Code      int    `json:"code"`
	Success   bool   `json:"success"`
	Message   string `json:"message"`
	Data      T      `json:"data"`
	Timestamp int64  `json:"timestamp"`
}

type holeScores struct {
	Score struct {
		Cjxx []map[string]string `json:"cjxx"`
		Gpa  struct {
			Gpa  string `json:"gpa"`
			Xxxf string `json:"xxxf"`
		} `json:"gpa"`
	} `json:"score"`
	Gpa struct {
		Data []struct {
			Gpa   string `json:"gpa"`
			Xndxq string `json:"xndxq"`
		} `json:"data"`
	} `json:"gpa"`
}

type holeEvents struct {
	List []map[string]string `json:"list"`
}

const scoreV2 = "/chapi/api/course/score_v2"

func TestTreeholeGradesAndEvents(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	s := decode[holeEnv[holeScores]](t, get(t, c, Treehole, scoreV2, true))
	if s.Code != 20000 || !s.Success || len(s.Data.Score.Cjxx) < 5 || s.Data.Score.Gpa.Gpa == "" || len(s.Data.Gpa.Data) == 0 {
		t.Fatalf("%+v", s)
	}
	if first := s.Data.Score.Cjxx[0]; first["xqcj"] != "88" || first["jd"] != "3.70" || first["xnd"] != "25-26" || first["xq"] != "1" {
		t.Errorf("first %v", first)
	}
	var noJd bool
	for _, r := range s.Data.Score.Cjxx {
		if _, ok := r["jd"]; !ok {
			noJd = true
		}
	}
	if !noJd {
		t.Error("no course misses jd (an awkward case)")
	}

	ev := decode[holeEnv[holeEvents]](t, get(t, c, Treehole, "/chapi/api/v3/events/list?startTime=2026-04-15&endTime=2026-04-15&page=1&limit=10", true))
	if ev.Code != 20000 || len(ev.Data.List) != 2 {
		t.Fatalf("today's events %+v", ev)
	}
	for _, e := range ev.Data.List {
		if !strings.HasPrefix(e["event_start_time"], "2026-04-15 ") || e["event_name"] == "" {
			t.Errorf("event %v", e)
		}
	}
	week := decode[holeEnv[holeEvents]](t, get(t, c, Treehole, "/chapi/api/v3/events/list?startTime=2026-04-15&endTime=2026-04-21&page=1&limit=3", true))
	if len(week.Data.List) != 3 {
		t.Errorf("limit 3 gave %d", len(week.Data.List))
	}
	page2 := decode[holeEnv[holeEvents]](t, get(t, c, Treehole, "/chapi/api/v3/events/list?startTime=2026-04-15&endTime=2026-04-21&page=2&limit=3", true))
	if len(page2.Data.List) != 3 || page2.Data.List[0]["event_name"] == week.Data.List[0]["event_name"] {
		t.Errorf("page 2 %v", page2.Data.List)
	}

	lab := decode[holeEnv[struct {
		Events []map[string]string `json:"events"`
	}]](t, get(t, c, Treehole, "/chapi/api/v3/lab_events?startDate=2026-04-15&endDate=2026-04-30", true))
	if len(lab.Data.Events) != 3 || lab.Data.Events[0]["TITLE"] == "" || lab.Data.Events[2]["title"] == "" {
		t.Errorf("lab events %v", lab.Data.Events)
	}

	feed := decode[holeEnv[struct {
		List []struct {
			Pid         int   `json:"pid"`
			Timestamp   int64 `json:"timestamp"`
			CommentList []any `json:"comment_list"`
		} `json:"list"`
	}]](t, get(t, c, Treehole, "/chapi/api/v3/hole/list_comments?page=1&limit=10&comment_limit=10&comment_stream=1", true))
	if len(feed.Data.List) != 2 || feed.Data.List[0].Timestamp > wed.Unix() {
		t.Errorf("feed %+v", feed.Data)
	}
}

func TestTreeholeExpiry(t *testing.T) {
	c := start(t)
	for name, val := range map[string]string{
		"missing":   "",
		"wrong":     "Bearer abc.def.ghi",
		"card's":    "Bearer " + c.Secrets()[Card].Headers["synjones-auth"][len("bearer "):],
		"no scheme": c.Secrets()[Treehole].Headers["Authorization"][len("Bearer "):],
	} {
		req, _ := http.NewRequest("GET", c.Origin(Treehole)+scoreV2, nil)
		if val != "" {
			req.Header.Set("Authorization", val)
		}
		if r := doReq(t, req); r.status != http.StatusUnauthorized {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	c.SetExpired(Treehole, true)
	if r := get(t, c, Treehole, "/chapi/api/v3/events/list", true); r.status != http.StatusUnauthorized {
		t.Errorf("expired: %d", r.status)
	}
}

func TestTreeholeVerification(t *testing.T) {
	c := start(t, WithClock(fixed(wed)), WithVerification(Treehole))
	g := decode[holeEnv[any]](t, get(t, c, Treehole, scoreV2, true))
	if g.Code != 40077 || g.Success || g.Data != nil {
		t.Errorf("grades in verification: %+v", g)
	}
	e := decode[holeEnv[any]](t, get(t, c, Treehole, "/chapi/api/v3/events/list", true))
	if e.Code != 40002 || e.Success || e.Message != "请进行短信验证" {
		t.Errorf("events in verification: %+v", e)
	}
	post := func(path, body string) holeEnv[any] {
		t.Helper()
		req, _ := http.NewRequest("POST", c.Origin(Treehole)+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", c.Secrets()[Treehole].Headers["Authorization"])
		return decode[holeEnv[any]](t, doReq(t, req))
	}
	// SMS verification: send, a wrong code fails, the demo code passes.
	if r := post("/chapi/api/jwt_send_msg", `{}`); r.Code != 20000 {
		t.Errorf("send %+v", r)
	}
	if r := post("/chapi/api/jwt_msg_verify", `{"valid_code":"000000"}`); r.Success {
		t.Errorf("wrong code passed %+v", r)
	}
	if r := decode[holeEnv[any]](t, get(t, c, Treehole, "/chapi/api/v3/events/list", true)); r.Code != 40002 {
		t.Errorf("still gated? %+v", r)
	}
	if r := post("/chapi/api/jwt_msg_verify", `{"valid_code":"`+SMSDemoCode+`"}`); r.Code != 20000 {
		t.Errorf("verify %+v", r)
	}
	if r := decode[holeEnv[holeEvents]](t, get(t, c, Treehole, "/chapi/api/v3/events/list", true)); r.Code != 20000 || len(r.Data.List) == 0 {
		t.Errorf("after verify %+v", r)
	}
	// Grades keep their own gate until an authorisation code is fetched.
	if r := decode[holeEnv[any]](t, get(t, c, Treehole, scoreV2, true)); r.Code != 40077 {
		t.Errorf("grades after sms %+v", r)
	}
	if r := post("/chapi/api/course/send_get_token_message", `{}`); r.Code != 20000 {
		t.Errorf("send token message %+v", r)
	}
	if r := post("/chapi/api/course/mobile_message_get_token", `{"code":"`+SMSDemoCode+`"}`); r.Code != 20000 {
		t.Errorf("token %+v", r)
	}
	if r := decode[holeEnv[holeScores]](t, get(t, c, Treehole, scoreV2, true)); r.Code != 20000 || len(r.Data.Score.Cjxx) == 0 {
		t.Errorf("grades after token %+v", r)
	}
	// Verification never replaces the session check.
	if r := get(t, c, Treehole, scoreV2, false); r.status != http.StatusUnauthorized {
		t.Errorf("no session in verification: %d", r.status)
	}
	c.SetVerification(true)
	if r := decode[holeEnv[any]](t, get(t, c, Treehole, scoreV2, true)); r.Code != 40077 {
		t.Errorf("SetVerification(true) %+v", r)
	}
	if r := post("/chapi/api/course/password_get_token", `{"code":"`+SMSDemoCode+`"}`); r.Code != 20000 {
		t.Errorf("password token %+v", r)
	}
	if r := post("/chapi/api/course/password_get_token", `not json`); r.Success {
		t.Errorf("bad json %+v", r)
	}
}
