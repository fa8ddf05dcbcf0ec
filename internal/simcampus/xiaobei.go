package simcampus

import (
	"encoding/json"
	"net/http"
)

// xiaobeiHandler serves xiaobei.pku.edu.cn (campus facts §7): the events
// list, behind a Flask session cookie. Without it the answer is HTTP 401
// (the facts say "401 or 302"; the body is a guess).
func (c *Campus) xiaobeiHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/api_activity", c.xiaobeiActivity)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/api_validate" {
			c.xiaobeiValidate(w, r)
			return
		}
		if !c.cookieOK(r, Xiaobei, xiaobeiCookie) {
			writeRaw(w, http.StatusUnauthorized, []byte(`{"msg":"请先登录"}`))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// xiaobeiActivity answers ?event_type=lecture|show|recruitment|other with
// offset and limit; start_time is RFC 2822 (see the rfc2822 fixture function).
func (c *Campus) xiaobeiActivity(w http.ResponseWriter, r *http.Request) {
	var all map[string][]json.RawMessage
	if err := renderJSON("xiaobei/activity.json.tmpl", c.now(), nil, &all); err != nil {
		fail500(w, err)
		return
	}
	list := all[param(r, "event_type")]
	off := intParam(r, "offset", 0, 1<<20)
	limit := intParam(r, "limit", 10, 100)
	out := []json.RawMessage{}
	if off < len(list) {
		out = list[off:min(len(list), off+limit)]
	}
	writeJSON(w, http.StatusOK, map[string]any{"activity": out})
}
