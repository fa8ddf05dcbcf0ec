package simcampus

import (
	"encoding/json"
	"net/http"
	"strings"
)

// SMSDemoCode is the verification code the simulated treehole accepts for its
// SMS and authorisation-code checks (nothing is sent anywhere).
const SMSDemoCode = "123456"

// Treehole answer codes (campus facts §3A, §5).
const (
	holeOK          = 20000
	holeNeedSMS     = 40002
	holeNeedGradeOK = 40077
)

// treeholeHandler serves treehole.pku.edu.cn (campus facts §3A, §5, §7).
// Every path needs "Authorization: Bearer <JWT>"; without it the answer is
// HTTP 401. In the verification state (WithVerification) grades answer code
// 40077 and every other data endpoint code 40002, until the client verifies.
func (c *Campus) treeholeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /chapi/api/course/score_v2", c.holeScores)
	mux.HandleFunc("GET /chapi/api/v3/events/list", c.holeGated(c.holeEvents))
	mux.HandleFunc("GET /chapi/api/v3/lab_events", c.holeGated(c.holeLabEvents))
	mux.HandleFunc("GET /chapi/api/v3/hole/list_comments", c.holeGated(c.holeFeed))
	mux.HandleFunc("POST /chapi/api/jwt_send_msg", c.holeSent)
	mux.HandleFunc("POST /chapi/api/jwt_msg_verify", c.holeVerify("valid_code", &c.smsGate))
	mux.HandleFunc("POST /chapi/api/course/send_get_token_message", c.holeSent)
	mux.HandleFunc("POST /chapi/api/course/mobile_message_get_token", c.holeVerify("code", &c.gradeTok))
	mux.HandleFunc("POST /chapi/api/course/password_get_token", c.holeVerify("code", &c.gradeTok))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chapi/cas_iaaa_login" {
			c.holeCASLogin(w, r)
			return
		}
		if !c.bearerOK(r, Treehole, treeholeHeader) {
			// Guess: the body of the treehole's 401 is not recorded; the
			// service is a Laravel app, whose unauthenticated JSON is this.
			writeRaw(w, http.StatusUnauthorized, []byte(`{"message":"Unauthenticated."}`))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// holeOKBody writes the treehole envelope with data.
func (c *Campus) holeOKBody(w http.ResponseWriter, data any) {
	writeJSON(w, http.StatusOK, map[string]any{
		"code": holeOK, "success": true, "message": "success", "data": data, "timestamp": c.now().Unix(),
	})
}

// holeFail writes a non-20000 code with HTTP 200, as the treehole does.
func holeFail(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, http.StatusOK, map[string]any{"code": code, "success": false, "message": msg, "data": nil})
}

// needSMS answers 40002 while the SMS gate is on. The message text is a
// guess (campus facts §5).
func (c *Campus) needSMS(w http.ResponseWriter) bool {
	c.mu.Lock()
	on := c.smsGate
	c.mu.Unlock()
	if on {
		holeFail(w, holeNeedSMS, "请进行短信验证")
	}
	return on
}

func (c *Campus) holeGated(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c.needSMS(w) {
			return
		}
		h(w, r)
	}
}

// holeScores answers the grades, or 40077 while the authorisation-code gate
// is on (checked first: grades have their own second factor).
func (c *Campus) holeScores(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	gate := c.gradeTok
	c.mu.Unlock()
	if gate {
		holeFail(w, holeNeedGradeOK, "获取授权码")
		return
	}
	writeRaw(w, http.StatusOK, fixture("treehole/score_v2.json"))
}

func (c *Campus) holeSent(w http.ResponseWriter, r *http.Request) {
	c.holeOKBody(w, nil)
}

// holeVerify reads {"<field>":"<code>"}; SMSDemoCode clears the gate.
func (c *Campus) holeVerify(field string, gate *bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			holeFail(w, 40001, "参数错误")
			return
		}
		code, _ := body[field].(string)
		if code != SMSDemoCode {
			holeFail(w, 40003, "验证码错误") // guess: the wrong-code answer is not recorded
			return
		}
		c.mu.Lock()
		*gate = false
		c.mu.Unlock()
		c.holeOKBody(w, nil)
	}
}

// holeEvents answers the activity calendar: startTime, endTime (YYYY-MM-DD,
// inclusive), page (1-based) and limit.
func (c *Campus) holeEvents(w http.ResponseWriter, r *http.Request) {
	var all []json.RawMessage
	if err := renderJSON("treehole/events.json.tmpl", c.now(), nil, &all); err != nil {
		fail500(w, err)
		return
	}
	from, to := param(r, "startTime"), param(r, "endTime")
	var hit []json.RawMessage
	for _, e := range all {
		var ev struct {
			Start string `json:"event_start_time"`
		}
		json.Unmarshal(e, &ev)
		if dateIn(ev.Start, from, to) {
			hit = append(hit, e)
		}
	}
	limit := max(1, intParam(r, "limit", 10, 100))
	page := max(1, intParam(r, "page", 1, 1<<20))
	out := []json.RawMessage{}
	if s := (page - 1) * limit; s < len(hit) {
		out = hit[s:min(len(hit), s+limit)]
	}
	c.holeOKBody(w, map[string]any{"list": out})
}

// holeLabEvents answers the academic calendar between startDate and endDate.
// Keys are upper-case; one record uses lower-case keys, which clients accept.
func (c *Campus) holeLabEvents(w http.ResponseWriter, r *http.Request) {
	var all []map[string]any
	if err := renderJSON("treehole/lab_events.json.tmpl", c.now(), nil, &all); err != nil {
		fail500(w, err)
		return
	}
	from, to := param(r, "startDate"), param(r, "endDate")
	out := []map[string]any{}
	for _, e := range all {
		s, _ := e["START_TIME"].(string)
		if s == "" {
			s, _ = e["start_time"].(string)
		}
		if dateIn(s, from, to) {
			out = append(out, e)
		}
	}
	c.holeOKBody(w, map[string]any{"events": out})
}

// holeFeed answers the newest holes (those not in the future), page/limit.
func (c *Campus) holeFeed(w http.ResponseWriter, r *http.Request) {
	var all []json.RawMessage
	if err := renderJSON("treehole/holes.json.tmpl", c.now(), nil, &all); err != nil {
		fail500(w, err)
		return
	}
	now := c.now().Unix()
	var hit []json.RawMessage
	for _, h := range all {
		var v struct {
			Timestamp int64 `json:"timestamp"`
		}
		json.Unmarshal(h, &v)
		if v.Timestamp <= now {
			hit = append(hit, h)
		}
	}
	limit := max(1, intParam(r, "limit", 25, 100))
	page := max(1, intParam(r, "page", 1, 1<<20))
	out := []json.RawMessage{}
	if s := (page - 1) * limit; s < len(hit) {
		out = hit[s:min(len(hit), s+limit)]
	}
	c.holeOKBody(w, map[string]any{"list": out})
}

// dateIn reports whether the date part of ts ("YYYY-MM-DD ...") lies in
// [from, to]; an empty bound is open.
func dateIn(ts, from, to string) bool {
	d, _, _ := strings.Cut(ts, " ")
	if len(from) > 10 {
		from = from[:10]
	}
	if len(to) > 10 {
		to = to[:10]
	}
	return (from == "" || d >= from) && (to == "" || d <= to)
}
