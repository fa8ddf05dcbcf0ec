package proxy

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// attackerTicket is a ticket of the attacker's own account, as a hostile
// document would hold it.
const attackerTicket = "ATTACKER-ticket-0123456789abcdef"

// plantCookieNames are every session cookie name of the built-in
// catalogue, and one no service declares.
var plantCookieNames = []string{"SESSION", "JSESSIONID", "hallticket", "pku_token", "_session", "XSRF-TOKEN",
	"PHPSESSID", "session", "JWTUser", "rememberMe", "attackerNew"}

// plantCampus is the built-in catalogue with every origin on one loopback
// server that answers every request as a careless single sign-on would: a
// Set-Cookie for the attacker's account under every session cookie name
// the request did not carry, and under every name when the request holds
// the attacker's ticket (an ordinary path that also reads a ticket). "/go"
// redirects into the portal's entry point with the attacker's ticket.
func plantCampus(t *testing.T) (*recorder, Catalogue) {
	var srv *recorder
	srv = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		h := srv.Hits()
		ticket := strings.Contains(r.URL.RawQuery+h[len(h)-1].Body, attackerTicket)
		for _, n := range plantCookieNames {
			if c, err := r.Cookie(n); err == nil && strings.HasPrefix(c.Value, "user-") && !ticket {
				continue
			}
			http.SetCookie(w, &http.Cookie{Name: n, Value: "attacker-" + n + "-0123456789abcdef", Path: "/"})
		}
		if r.URL.Path == "/go" {
			http.Redirect(w, r, "/portal2017/ssoLogin.do?token="+attackerTicket, http.StatusFound)
			return
		}
		w.Write([]byte(`{"success":true}`))
	})
	cat := Catalogue{}
	for name, s := range Builtin() {
		c := *s
		c.Origin = srv.URL
		c.Login.Redirect, c.Login.Redirects = "", nil
		for _, p := range s.Login.prefixes() {
			if strings.HasPrefix(p, "/") {
				c.Login.Redirects = append(c.Login.Redirects, p)
			}
		}
		cat[name] = &c
	}
	require.NoError(t, cat.Validate())
	return srv, cat
}

func plantKeystore(t *testing.T) (*FileKeystore, string) {
	path := filepath.Join(t.TempDir(), "keystore.json")
	ks, err := OpenKeystore(path)
	require.NoError(t, err)
	require.NoError(t, ks.Put("portal", &ServiceSecrets{Cookies: map[string]string{"SESSION": "user-portal-SESSION-5f5f5f5f", "JSESSIONID": "user-portal-JSESSIONID-6e6e6e"}}))
	require.NoError(t, ks.Put("wproc", &ServiceSecrets{Cookies: map[string]string{"PHPSESSID": "user-wproc-PHPSESSID-7d7d7d7d"}}))
	require.NoError(t, ks.Put("card-legacy", &ServiceSecrets{Cookies: map[string]string{"hallticket": "user-hallticket-8c8c8c8c8c"}}))
	require.NoError(t, ks.Put("treehole", &ServiceSecrets{Cookies: map[string]string{"_session": "user-treehole-session-9b9b9b"},
		Headers: map[string]string{"Authorization": "Bearer user-treehole-jwt-aaaa0000"}}))
	return ks, path
}

// Every login and hand-off entry point the campus facts list
// (../shared/campus/README.md §0, §1a, §1b, §5, §6, §7, §8, §10), with the
// attacker's ticket where the real one goes, and spellings a server reads
// as the same path.
var campusEntryPoints = []Request{
	{Service: "iaaa", Method: "POST", Path: "/iaaa/oauthlogin.do", Body: []byte("appid=portal2017&userName=attacker&password=x")},
	{Service: "iaaa", Path: "/iaaa/oauth.jsp?appID=portal2017&appName=x&redirectUrl=https://portal.pku.edu.cn/portal2017/ssoLogin.do"},
	{Service: "iaaa", Method: "POST", Path: "/iaaa/oauthlogin4QRCode.do", Body: []byte("appId=PKUApp&issuerAppId=iaaa&targetAppId=portal2017")},
	{Service: "iaaa", Path: "/iaaa/getPublicKey.do"},
	{Service: "portal", Path: "/portal2017/ssoLogin.do", Query: url.Values{"_rand": {"0.5"}, "token": {attackerTicket}}},
	{Service: "portal", Path: "/publicQuery/ssoLogin.do?token=" + attackerTicket},
	{Service: "portal", Path: "/portal2017/util/redirectToCard.do"},
	{Service: "portal", Path: "/portal2017/util/portletRedir.do?portletId=cardM"},
	{Service: "portal", Path: "/portal2017/util/portletRedir.do?portletId=coursetable"},
	{Service: "portal", Path: "/portal2017/util/appSysRedir.do?appId=xiaobei"},
	{Service: "portal", Path: "/portal2017/login.jsp"},
	{Service: "portal", Path: "/portal2017/ssoLogin.do;jsessionid=1?token=" + attackerTicket},
	{Service: "portal", Path: "/PORTAL2017/SSOLOGIN.DO?token=" + attackerTicket},
	{Service: "portal", Path: "/portal2017/%73soLogin.do?token=" + attackerTicket},
	{Service: "portal", Path: "/portal2017/%2573soLogin.do?token=" + attackerTicket},
	{Service: "portal", Path: "/portal2017;x=1/ssoLogin.do?token=" + attackerTicket},
	{Service: "portal", Path: "/portal2017/ssoLogin.do/?token=" + attackerTicket},
	{Service: "portal", Path: "/portal2017/ssoLogin.do.?token=" + attackerTicket},
	{Service: "portal", Path: "/portal2017/\u017FsoLogin.do?token=" + attackerTicket},     // a long s, which Java's equalsIgnoreCase takes for s
	{Service: "portal", Path: "/portal2017/ssoLog\u0131n.do?token=" + attackerTicket},     // a dotless i
	{Service: "portal", Path: "/portal2017/%C5%BFsoLogin.do?token=" + attackerTicket},     // the long s escaped
	{Service: "card", Path: "/berserker-auth/cas/login/p\u212Au?token=" + attackerTicket}, // the Kelvin sign
	{Service: "card", Path: "/berserker-auth/cas/login/pku?token=" + attackerTicket + "&targetUrl=https%3A%2F%2Fbdcard.pku.edu.cn%2Fplat"},
	{Service: "card-legacy", Method: "POST", Path: "/cassyno/index", Body: []byte("ssoticketid=" + attackerTicket + "&errorcode=1")},
	{Service: "treehole", Path: "/chapi/cas_iaaa_login?version=3&uuid=0123456789ab&plat=web&token=" + attackerTicket},
	{Service: "treehole", Path: "/ch/web/iaaa_success?is_mobile=0&token=" + attackerTicket + "&uid=1"},
	{Service: "course", Path: "/webapps/bb-sso-BBLEARN/execute/authValidate/campusLogin?token=" + attackerTicket},
	{Service: "course", Path: "/webapps/login/"},
	{Service: "elective", Path: "/elective2008/ssoLogin.do?token=" + attackerTicket},
	{Service: "wproc", Path: "/site/login/cas-login?token=" + attackerTicket},
	{Service: "bdkj", Path: "/login/oauth?token=" + attackerTicket},
	{Service: "cwfw", Path: "/WFManager/home2.jsp?token=" + attackerTicket},
	{Service: "xiaobei", Path: "/api/api_validate?token=" + attackerTicket},
	{Service: "its", Method: "POST", Path: "/cas/webLogin", Body: []byte("iprange=yes&username=attacker&password=x")},
	{Service: "its", Path: "/cas/login"},
}

// Sessions belong to the host: a document cannot plant the attacker's
// session through any entry point, nor through an ordinary path that
// answers Set-Cookie for the attacker's account when the step hands it
// the attacker's ticket, nor by a redirect into an entry point, nor under
// a cookie name the stored session does not hold. The keystore's bytes
// stay the same.
func TestSessionsCannotBePlanted(t *testing.T) {
	srv, cat := plantCampus(t)
	ks, path := plantKeystore(t)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	p := New(Config{Catalogue: cat, Keystore: ks})
	empty := New(Config{Catalogue: cat}) // no sessions at all
	acc := access(cat.Names()...)
	ctx := context.Background()

	for _, r := range campusEntryPoints {
		r := r
		_, err := p.NewCall("hostile", acc).Do(ctx, &r)
		require.ErrorIs(t, err, ErrRefused, "%s %s", r.Service, r.Path)
		assert.Contains(t, err.Error(), "entry point", r.Path)
		// The refusal is the same whatever the keystore holds.
		r2 := r
		_, err2 := empty.NewCall("hostile", acc).Do(ctx, &r2)
		require.Error(t, err2)
		assert.Equal(t, err.Error(), err2.Error(), r.Path)
	}
	require.Empty(t, srv.Hits(), "an entry point is refused before anything is sent")

	ordinary := []Request{
		// The attacker's ticket, handed to ordinary paths.
		{Service: "portal", Path: "/portal2017/bizcenter/score/retrScores.do?token=" + attackerTicket},
		{Service: "portal", Path: "/portal2017/home.do", Query: url.Values{"ticket": {attackerTicket}}},
		{Service: "portal", Method: "POST", Path: "/portal2017/notice/retrAllSchoolNotice.do", Body: []byte("keyword=ALL&sso_token=" + attackerTicket)},
		{Service: "wproc", Method: "POST", Path: "/site/reservation/launch", Body: []byte(`{"access_token": "` + attackerTicket + `"}`)},
		{Service: "card-legacy", Path: "/page?hallticket=" + attackerTicket},
		{Service: "treehole", Path: "/chapi/api/v3/hole/list_comments?pku_token=" + attackerTicket},
		// A redirect into an entry point is not followed.
		{Service: "portal", Path: "/go"},
		// No ticket: new cookie names, and services without a stored
		// session, are never stored.
		{Service: "wproc", Path: "/site/reservation/list-page"},
		{Service: "bdkj", Path: "/api/rooms"},
		{Service: "course", Path: "/webapps/portal/execute"},
		{Service: "elective", Path: "/elective2008/edu/pku/stu/elective/controller/supplement/SupplyCancel.do"},
		{Service: "xiaobei", Path: "/api/api_activity"},
		{Service: "card", Path: "/berserker-app/ykt/tsm/queryCard"},
		{Service: "cwfw", Path: "/WF_CWBS/main.jsp"},
		{Service: "its", Path: "/netportal/itsUtil?operation=info"},
	}
	for _, r := range ordinary {
		r := r
		resp, err := p.NewCall("hostile", acc).Do(ctx, &r)
		require.NoError(t, err, "%s %s", r.Service, r.Path)
		assert.NotEqual(t, 0, resp.Status)
	}
	assert.Len(t, srv.Hits(), len(ordinary), "the redirect into the entry point was not followed")

	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the keystore is unchanged")
	ks2, err := OpenKeystore(path)
	require.NoError(t, err)
	for _, name := range ks2.Services() {
		ss, _ := ks2.Get(name)
		for _, v := range ss.Cookies {
			assert.NotContains(t, v, "attacker", name)
		}
	}
}

// Within one call, a cookie the service set that the keystore does not
// take still serves the call (a service without a stored session keeps
// its anonymous session for the call's next request), and never the next
// call.
func TestUnstoredSessionCookieServesOnlyTheCall(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/first" {
			http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: "anonymous-session-0123456789", Path: "/"})
		}
		w.Write([]byte("ok"))
	})
	cat := Catalogue{"elective": &Service{Name: "elective", Origin: srv.URL, Auth: Auth{Cookies: []string{"JSESSIONID"}}}}
	ks := MemKeystore(nil)
	p := New(Config{Catalogue: cat, Keystore: ks})
	call := p.NewCall("demo", access("elective"))
	_, err := call.Do(context.Background(), &Request{Service: "elective", Path: "/first"})
	require.NoError(t, err)
	_, err = call.Do(context.Background(), &Request{Service: "elective", Path: "/second"})
	require.NoError(t, err)
	_, ok := ks.Get("elective")
	assert.False(t, ok, "no session is created in the keystore")
	_, err = p.NewCall("demo", access("elective")).Do(context.Background(), &Request{Service: "elective", Path: "/third"})
	require.NoError(t, err)
	h := srv.Hits()
	assert.Equal(t, "JSESSIONID=anonymous-session-0123456789", h[1].Header.Get("Cookie"))
	assert.Empty(t, h[2].Header.Get("Cookie"))
}

// The entry points of a services file are read, checked and matched as
// the built-in ones are.
func TestEntryPointsFromServicesFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "services.yaml")
	require.NoError(t, os.WriteFile(f, []byte("sso:\n  origin: http://127.0.0.1:1\n  entry: [/login/sso.do, /cas/]\n"), 0o600))
	cat, err := LoadServices(f)
	require.NoError(t, err)
	assert.Equal(t, []string{"/login/sso.do", "/cas/"}, cat["sso"].Entry)
	cs, err := compileService("sso", cat["sso"])
	require.NoError(t, err)
	for p, want := range map[string]bool{"/login/sso.do": true, "/Login/SSO.do;x=1": true, "/cas/x": true, "/cas": false,
		"/login/sso.do2": false, "/login/other.do": false} {
		assert.Equal(t, want, cs.isEntry(p), p)
	}
	require.NoError(t, os.WriteFile(f, []byte("sso:\n  origin: http://127.0.0.1:1\n  entry: [login]\n"), 0o600))
	_, err = LoadServices(f)
	require.ErrorContains(t, err, "entry point")
}
