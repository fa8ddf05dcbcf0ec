package simcampus

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// The simulated IAAA (campus facts §0): getPublicKey.do, isMobileAuthen.do,
// oauthlogin.do with its answer shapes and error codes, the OTP ("手机令牌",
// RFC 6238 TOTP: HMAC-SHA1, 6 digits, 30 s) and the SMS path, an attempts
// limit, and tokens that each service's hand-off consumes once.
//
// Facts: the paths, the form fields, {"success":true,"token":…} and
// {"success":false,"errors":{"code","msg"}}, the codes E02 (account not
// activated), E05 (OTP wrong), E12 (bad redirect), E21 (too many attempts,
// wait 30 min), RSA PKCS#1 v1.5 of the password in base64, the pre-check's
// fields, and the TOTP parameters. Guesses: E01 for a wrong user name or
// password and E06 for a wrong SMS code (the facts list no code for
// either), the SMS sender's path (sendSMSCode.do) and answer, that an SMS
// account is isMobileAuthen:true with authenMode "否", the limit of 5
// failures, the token's 60 s life, and every message text.

// Account is a user of the simulated IAAA.
type Account struct {
	User     string // the student id, IAAA's userName
	Password string
	Name     string // what a hand-off reports (xiaobei's api_validate)
	// Mode is the second factor: "" none, "OTP" a TOTP code, "SMS" a
	// code sent to Mobile.
	Mode     string
	TOTP     string // base32 TOTP secret (Mode "OTP")
	Mobile   string // masked number shown by the pre-check (Mode "SMS")
	Inactive bool   // not yet activated: E02
}

// The demo accounts. Every value is fake and documented (docs/simcampus.md):
// the simulated campus is a stand-in, its passwords protect nothing.
const (
	DemoPassword = "pku-demo-2026"
	// DemoTOTPSecret is the OTP account's TOTP secret (base32).
	DemoTOTPSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	// DemoSMSCode is the code the simulated SMS sender "sends".
	DemoSMSCode = "246810"
	// MaxLoginFailures is how many failed logins lock an account for
	// LockTime (E21).
	MaxLoginFailures = 5
	LockTime         = 30 * time.Minute
	tokenLife        = 60 * time.Second
	smsLife          = 5 * time.Minute
	maxMinted        = 1024 // sessions the hand-offs keep per service
	maxTickets       = 4096
)

// DemoAccounts are the simulated IAAA's users: OTP, SMS, password only,
// and one not yet activated.
func DemoAccounts() []Account {
	return []Account{
		{User: "2100012345", Password: DemoPassword, Name: "张测试", Mode: "OTP", TOTP: DemoTOTPSecret},
		{User: "2100054321", Password: DemoPassword, Name: "李测试", Mode: "SMS", Mobile: "138****0000"},
		{User: "2100000001", Password: DemoPassword, Name: "王测试"},
		{User: "2100099999", Password: DemoPassword, Name: "赵测试", Inactive: true},
	}
}

// iaaaApps are the app ids the simulated IAAA knows, each with the path of
// its registered redirUrl on a service's origin (campus facts §0).
var iaaaApps = map[string]struct{ service, path string }{
	"portal2017":        {Portal, "/portal2017/ssoLogin.do"},
	"portalPublicQuery": {Portal, "/publicQuery/ssoLogin.do"},
	"PKU Helper":        {Treehole, "/chapi/cas_iaaa_login"},
	"wproc":             {Wproc, wprocLoginPath},
}

type ticket struct {
	purpose string // "iaaa:<appid>", "card", "xiaobei", "publicQuery"
	user    string
	exp     time.Time
}

type iaaaState struct {
	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyErr  error

	accounts map[string]Account
	failures map[string]int
	locked   map[string]time.Time
	sms      map[string]time.Time // user -> when the code was sent
	tickets  map[string]ticket
	minted   map[string]map[string]string // service -> "name=value" -> user
	logins   int
}

func (s *iaaaState) init(accounts []Account) {
	s.accounts = map[string]Account{}
	for _, a := range accounts {
		s.accounts[a.User] = a
	}
	s.failures, s.locked, s.sms = map[string]int{}, map[string]time.Time{}, map[string]time.Time{}
	s.tickets, s.minted = map[string]ticket{}, map[string]map[string]string{}
}

// WithAccount adds (or replaces) an account of the simulated IAAA.
func WithAccount(a Account) Option {
	return func(c *config) { c.accounts = append(c.accounts, a) }
}

// Logins counts the successful oauthlogin.do answers.
func (c *Campus) Logins() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.iaaa.logins
}

func (c *Campus) iaaaHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+iaaaLoginPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html;charset=UTF-8")
		w.Write(fixture("iaaa/oauth.html"))
	})
	mux.HandleFunc("GET /iaaa/getPublicKey.do", c.iaaaPublicKey)
	mux.HandleFunc("GET /iaaa/isMobileAuthen.do", c.iaaaPreCheck)
	mux.HandleFunc("POST /iaaa/sendSMSCode.do", c.iaaaSendSMS)
	mux.HandleFunc("POST /iaaa/oauthlogin.do", c.iaaaLogin)
	return mux
}

func (s *iaaaState) rsaKey() (*rsa.PrivateKey, error) {
	s.keyOnce.Do(func() { s.key, s.keyErr = rsa.GenerateKey(rand.Reader, 2048) })
	return s.key, s.keyErr
}

func (c *Campus) iaaaPublicKey(w http.ResponseWriter, r *http.Request) {
	k, err := c.iaaa.rsaKey()
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "key": pemText})
}

// iaaaPreCheck answers isMobileAuthen.do (campus facts §0, S2).
func (c *Campus) iaaaPreCheck(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	a, ok := c.iaaa.accounts[r.URL.Query().Get("userName")]
	c.mu.Unlock()
	out := map[string]any{"success": true, "isMobileAuthen": false, "authenMode": "否", "bzAuthMode": "否",
		"isBind": false, "isUnuAuth": false, "mobileMask": ""}
	if ok {
		switch a.Mode {
		case "OTP":
			out["isMobileAuthen"], out["authenMode"], out["isBind"] = true, "OTP", true
		case "SMS":
			out["isMobileAuthen"], out["mobileMask"], out["isBind"] = true, a.Mobile, true
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func iaaaError(w http.ResponseWriter, code, msg string) {
	writeJSON(w, http.StatusOK, map[string]any{"success": false, "errors": map[string]string{"code": code, "msg": msg}})
}

// iaaaSendSMS "sends" DemoSMSCode to an SMS account (a guess at the path
// and answer: the facts have only the smsCode form field). One code a
// minute.
func (c *Campus) iaaaSendSMS(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	user := r.PostForm.Get("userName")
	now := c.now()
	c.mu.Lock()
	a, ok := c.iaaa.accounts[user]
	sent, was := c.iaaa.sms[user]
	if ok && a.Mode == "SMS" && (!was || now.Sub(sent) >= time.Minute) {
		c.iaaa.sms[user] = now
	}
	c.mu.Unlock()
	switch {
	case !ok || a.Mode != "SMS":
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": "该账号未绑定手机"})
	case was && now.Sub(sent) < time.Minute:
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": "验证码发送过于频繁，请稍后再试"})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "验证码已发送至" + a.Mobile})
	}
}

// iaaaLogin is oauthlogin.do.
func (c *Campus) iaaaLogin(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	f := r.PostForm
	user, appid := f.Get("userName"), f.Get("appid")
	app, known := iaaaApps[appid]
	if !known || !c.registeredRedirect(app.service, app.path, f.Get("redirUrl")) {
		iaaaError(w, "E12", "重定向地址错误")
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.iaaa
	if until, ok := s.locked[user]; ok {
		if now.Before(until) {
			iaaaError(w, "E21", "登录失败次数过多，请30分钟后再试")
			return
		}
		delete(s.locked, user)
		delete(s.failures, user)
	}
	a, ok := s.accounts[user]
	fail := func(code, msg string) {
		if ok {
			s.failures[user]++
			if s.failures[user] >= MaxLoginFailures {
				s.locked[user] = now.Add(LockTime)
			}
		}
		iaaaError(w, code, msg)
	}
	if !ok || !c.passwordOK(f.Get("password"), a.Password) {
		fail("E01", "用户名或密码错误")
		return
	}
	if a.Inactive {
		iaaaError(w, "E02", "账号未激活，请先激活账号")
		return
	}
	switch a.Mode {
	case "OTP":
		valid, _ := totp.ValidateCustom(f.Get("otpCode"), a.TOTP, now, totp.ValidateOpts{Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if !valid {
			fail("E05", "手机令牌错误")
			return
		}
	case "SMS":
		sent, was := s.sms[user]
		if !was || now.Sub(sent) > smsLife || !sameSecret(f.Get("smsCode"), DemoSMSCode) {
			fail("E06", "短信验证码错误")
			return
		}
	}
	delete(s.failures, user)
	tok, err := randHex(16)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	s.addTicket(tok, ticket{purpose: "iaaa:" + appid, user: user, exp: now.Add(tokenLife)})
	s.logins++
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "token": tok})
}

// registeredRedirect checks redirUrl against the app's registered hand-off
// on the service's (loopback) origin; the query is free (the treehole's
// carries version, uuid and plat).
func (c *Campus) registeredRedirect(service, path, redir string) bool {
	u, err := url.Parse(redir)
	if err != nil {
		return false
	}
	return u.Scheme+"://"+u.Host == c.origins[service] && u.Path == path
}

// passwordOK decrypts the password field (base64 of RSA PKCS#1 v1.5, as
// the real clients send it) and compares.
func (c *Campus) passwordOK(field, want string) bool {
	k, err := c.iaaa.rsaKey()
	if err != nil {
		return false
	}
	ct, err := base64.StdEncoding.DecodeString(field)
	if err != nil {
		return false
	}
	pt, err := rsa.DecryptPKCS1v15(nil, k, ct)
	if err != nil {
		return false
	}
	return sameSecret(string(pt), want)
}

func (s *iaaaState) addTicket(tok string, t ticket) {
	if len(s.tickets) >= maxTickets {
		for k, v := range s.tickets {
			if time.Now().After(v.exp) || len(s.tickets) >= maxTickets {
				delete(s.tickets, k)
			}
		}
	}
	s.tickets[tok] = t
}

// takeTicket consumes a ticket of the purpose; "" when there is none.
func (c *Campus) takeTicket(tok, purpose string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.iaaa.tickets[tok]
	if !ok || t.purpose != purpose || tok == "" {
		return ""
	}
	delete(c.iaaa.tickets, tok)
	if c.now().After(t.exp) {
		return ""
	}
	return t.user
}

// newTicket issues a hand-on ticket (portal to card, xiaobei, publicQuery).
func (c *Campus) newTicket(purpose, user string) (string, error) {
	tok, err := randHex(16)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.iaaa.addTicket(tok, ticket{purpose: purpose, user: user, exp: c.now().Add(tokenLife)})
	return tok, nil
}

// mint records a session a hand-off made: the service then accepts it as
// it accepts the demo session.
func (c *Campus) mint(service, name, value, user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.iaaa.minted[service]
	if m == nil {
		m = map[string]string{}
		c.iaaa.minted[service] = m
	}
	if len(m) >= maxMinted {
		for k := range m {
			delete(m, k)
			break
		}
	}
	m[name+"="+value] = user
}

// mintedUser returns the user of a minted session value, "" when it is
// none.
func (c *Campus) mintedUser(service, name, value string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.iaaa.minted[service][name+"="+value]
}

// account returns a user's account.
func (c *Campus) account(user string) Account {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.iaaa.accounts[user]
}

// sessionCookie returns the user of the request's session cookie minted
// for service, "" when it has none.
func (c *Campus) sessionCookie(r *http.Request, service, name string) string {
	for _, ck := range r.Cookies() {
		if ck.Name == name {
			if u := c.mintedUser(service, name, ck.Value); u != "" {
				return u
			}
		}
	}
	return ""
}

func setCookie(w http.ResponseWriter, origin, name, value string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: strings.HasPrefix(origin, "https:")})
}
