package simcampus

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The services' hand-offs (campus facts §0, §1a, §4A, §5, §7, §8): each
// consumes an IAAA token (or a ticket the portal hands on) once and sets a
// fresh session, which the service then accepts as it accepts the demo
// session. A missing, used or expired token is sent to the IAAA login page.

// toIAAA answers a hand-off without a valid token.
func (c *Campus) toIAAA(w http.ResponseWriter, r *http.Request, appID, redirect string) {
	q := url.Values{"appID": {appID}, "redirectUrl": {redirect}}
	http.Redirect(w, r, c.origins[iaaa]+iaaaLoginPath+"?"+q.Encode(), http.StatusFound)
}

// portalSession is the user of the request's portal2017 SESSION cookie.
func (c *Campus) portalSession(r *http.Request) string {
	if c.isExpired(Portal) {
		return ""
	}
	return c.sessionCookie(r, Portal, "SESSION")
}

func (c *Campus) portalHandoffs(mux *http.ServeMux) {
	// GET /portal2017/ssoLogin.do?_rand=&token= sets the portal cookie
	// SESSION (§1a step 2).
	mux.HandleFunc("/portal2017/ssoLogin.do", func(w http.ResponseWriter, r *http.Request) {
		user := c.takeTicket(r.URL.Query().Get("token"), "iaaa:portal2017")
		if user == "" {
			c.toIAAA(w, r, "portal2017", c.origins[Portal]+"/portal2017/ssoLogin.do")
			return
		}
		sess, err := randHex(16)
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		sess = strings.ToUpper(sess)
		c.mint(Portal, "SESSION", sess, user)
		setCookie(w, c.origins[Portal], "SESSION", sess)
		http.Redirect(w, r, "/portal2017/", http.StatusFound)
	})
	// GET /publicQuery/ssoLogin.do?token= (§4A), from IAAA
	// portalPublicQuery or from the portal2017 portlet redirect.
	mux.HandleFunc("/publicQuery/ssoLogin.do", func(w http.ResponseWriter, r *http.Request) {
		tok := r.URL.Query().Get("token")
		user := c.takeTicket(tok, "iaaa:portalPublicQuery")
		if user == "" {
			user = c.takeTicket(tok, "publicQuery")
		}
		if user == "" {
			c.portalToIAAA(w, r)
			return
		}
		sess, err := randHex(16)
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		sess = strings.ToUpper(sess)
		c.mint(Portal, portalCookie, sess, user)
		setCookie(w, c.origins[Portal], portalCookie, sess)
		http.Redirect(w, r, "/publicQuery/", http.StatusFound)
	})
	// The portal2017 session hands on: to publicQuery (§4A), the card
	// (§1a step 3) and xiaobei (§7). The tickets' shapes are guesses.
	mux.HandleFunc("/portal2017/util/portletRedir.do", c.portalHandOn("publicQuery", func(tok string) string {
		return c.origins[Portal] + "/publicQuery/ssoLogin.do?token=" + tok
	}, "coursetable"))
	mux.HandleFunc("/portal2017/util/redirectToCard.do", c.portalHandOn("card", func(tok string) string {
		return c.origins[Card] + "/berserker-auth/cas/login/pku?token=" + tok + "&targetUrl=" + url.QueryEscape(c.origins[Card]+"/plat/")
	}, ""))
	mux.HandleFunc("/portal2017/util/appSysRedir.do", c.portalHandOn("xiaobei", func(tok string) string {
		return c.origins[Xiaobei] + "/?token=" + tok
	}, "xiaobei"))
}

// portalHandOn answers a portal2017 hand-on: with the SESSION cookie, a 302
// to where next() says with a fresh ticket; without it, to IAAA. want, when
// set, is the one portletId or appId the simulation hands on for.
func (c *Campus) portalHandOn(purpose string, next func(tok string) string, want string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if want != "" && q.Get("portletId") != want && q.Get("appId") != want {
			http.NotFound(w, r)
			return
		}
		user := c.portalSession(r)
		if user == "" {
			c.toIAAA(w, r, "portal2017", c.origins[Portal]+"/portal2017/ssoLogin.do")
			return
		}
		tok, err := c.newTicket(purpose, user)
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		http.Redirect(w, r, next(tok), http.StatusFound)
	}
}

// cardCASLogin is /berserker-auth/cas/login/pku?token=&targetUrl=: a 302
// whose Location carries synjones-auth=<JWT> (§1a step 4).
func (c *Campus) cardCASLogin(w http.ResponseWriter, r *http.Request) {
	user := c.takeTicket(r.URL.Query().Get("token"), "card")
	if user == "" {
		c.toIAAA(w, r, "portal2017", c.origins[Portal]+"/portal2017/ssoLogin.do")
		return
	}
	jwt, err := fakeJWT(c.now(), user)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	c.mint(Card, cardHeader, jwt, user)
	http.Redirect(w, r, c.origins[Card]+"/plat/?synjones-auth="+jwt, http.StatusFound)
}

// holeCASLogin is /chapi/cas_iaaa_login?version=3&uuid=&plat=web&_rand=&token=:
// a 302 to /ch/web/iaaa_success with the JWT, and the cookies (§5).
func (c *Campus) holeCASLogin(w http.ResponseWriter, r *http.Request) {
	user := c.takeTicket(r.URL.Query().Get("token"), "iaaa:PKU Helper")
	if user == "" {
		c.toIAAA(w, r, "PKU Helper", c.origins[Treehole]+"/chapi/cas_iaaa_login?version=3&plat=web")
		return
	}
	now := c.now()
	jwt, err := fakeJWT(now, user)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	xsrf, err1 := randB64(30)
	sess, err2 := randB64(30)
	if err1 != nil || err2 != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	c.mint(Treehole, treeholeHeader, jwt, user)
	exp := strconv.FormatInt(now.Add(24*3600e9).Unix(), 10)
	o := c.origins[Treehole]
	setCookie(w, o, "pku_token", jwt)
	setCookie(w, o, "pku_expires_in", exp)
	setCookie(w, o, "pku_uid", user)
	setCookie(w, o, "XSRF-TOKEN", xsrf)
	setCookie(w, o, "_session", sess)
	q := url.Values{"is_mobile": {"0"}, "token": {jwt}, "expires_in": {exp}, "uid": {user}}
	http.Redirect(w, r, "/ch/web/iaaa_success?"+q.Encode(), http.StatusFound)
}

// wprocCASLogin is /site/login/cas-login?token=&_rand= with an IAAA token:
// the session cookie (its name is a guess) and on to /v2/ (§8).
func (c *Campus) wprocCASLogin(w http.ResponseWriter, r *http.Request) bool {
	tok := r.URL.Query().Get("token")
	if tok == "" {
		return false
	}
	user := c.takeTicket(tok, "iaaa:wproc")
	if user == "" {
		return false
	}
	sess, err := randHex(13)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return true
	}
	c.mint(Wproc, wprocCookie, sess, user)
	setCookie(w, c.origins[Wproc], wprocCookie, sess)
	http.Redirect(w, r, "/v2/", http.StatusFound)
	return true
}

// xiaobeiValidate is /api/api_validate?token=: {campus_id, name, role} and
// the Flask session cookie (§7).
func (c *Campus) xiaobeiValidate(w http.ResponseWriter, r *http.Request) {
	user := c.takeTicket(r.URL.Query().Get("token"), "xiaobei")
	if user == "" {
		writeRaw(w, http.StatusUnauthorized, []byte(`{"msg":"请先登录"}`))
		return
	}
	b, err := randB64(24)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	sess := "." + b
	c.mint(Xiaobei, xiaobeiCookie, sess, user)
	setCookie(w, c.origins[Xiaobei], xiaobeiCookie, sess)
	writeJSON(w, http.StatusOK, map[string]string{"campus_id": user, "name": c.account(user).Name, "role": "student"})
}
