// Package campuslogin is the host's campus login: IAAA (campus facts §0)
// and each service's hand-off, which make the sessions the keystore holds.
// Only the command line imports it (harness login); no step, proxy call or
// document reaches it, so the login and hand-off entry points that the
// proxy refuses to steps are called here and nowhere else.
//
// It talks to the catalogue's origins only (the built-in ones, or those of
// a services file such as the simulated campus's), through its own HTTP
// client: HTTP/1.1, TLS 1.2+, no environment proxy, redirects followed by
// hand and only where a hand-off leads, bounded bodies and times. The
// password, codes, tokens and session values never appear in an error or
// in the progress lines.
package campuslogin

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pkuinfo/harness/proxy"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// DefaultServices are logged in when none is named.
var DefaultServices = []string{"portal", "card", "treehole", "wproc", "xiaobei"}

// Known lists the services the login knows a hand-off for.
func Known() []string {
	out := make([]string, 0, len(handoffs))
	for k := range handoffs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Prompter asks the user.
type Prompter interface {
	// Secret reads a value without echo (a code, a TOTP secret).
	Secret(prompt string) (string, error)
}

// Config is one login's setting.
type Config struct {
	// Catalogue has the origins of iaaa and of every service (built-in,
	// or overridden by a services file).
	Catalogue proxy.Catalogue
	// Resolve maps host:port to an address, as --resolve does.
	Resolve map[string]string
	// ResolveCA is PEM roots trusted for the Resolve hosts only.
	ResolveCA []byte
	// Clock is the TOTP clock (nil: time.Now).
	Clock func() time.Time
	// Prompt asks for the OTP or SMS code.
	Prompt Prompter
	// Progress receives one line per step (no secret); nil: none.
	Progress io.Writer
}

// Credentials are what the user gives.
type Credentials struct {
	User     string
	Password string
	// TOTP is a base32 TOTP secret: with it, OTP codes are computed.
	TOTP string
}

// Result is a login's outcome.
type Result struct {
	// Sessions holds each service logged in.
	Sessions map[string]*proxy.ServiceSecrets
	// Failed holds the services that failed, with the reason.
	Failed map[string]error
	// Name is the user's name, when a hand-off reported it (xiaobei).
	Name string
	// Mode is the account's second factor as the pre-check said: "OTP",
	// "SMS" or "".
	Mode string
}

// IAAAError is an answer {"success":false,"errors":{"code","msg"}}.
type IAAAError struct {
	Code string
	Msg  string
}

func (e *IAAAError) Error() string {
	hint := ""
	switch e.Code {
	case "E01":
		hint = " (wrong user name or password)"
	case "E02":
		hint = " (the account must be activated first)"
	case "E05":
		hint = " (the OTP code is wrong)"
	case "E06":
		hint = " (the SMS code is wrong)"
	case "E21":
		hint = " (too many failed attempts: wait 30 minutes)"
	}
	return fmt.Sprintf("IAAA refused the login: %s %s%s", e.Code, e.Msg, hint)
}

// Limits of the login's own client.
const (
	requestTimeout = 15 * time.Second
	maxBody        = 1 << 20
	maxRedirects   = 5
)

type session struct {
	cfg    Config
	cred   Credentials
	hc     *http.Client
	roots  *x509.CertPool
	jar    map[string]map[string]string // origin -> cookie name -> value
	key    *rsa.PublicKey
	mode   string
	mobile string // the SMS account's masked number
	code   string // the typed OTP or SMS code, reused for the next app
	typed  bool
	// secrets are scrubbed from every message.
	secrets []string
	name    string
	portal  bool // the portal2017 SESSION is in the jar
}

// Login logs in to IAAA as cred says and hands the session on to each
// service. A service whose hand-off fails is in Result.Failed; an IAAA
// refusal of the first login ends it (no hand-off can follow).
func Login(ctx context.Context, cfg Config, cred Credentials, services []string) (*Result, error) {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if len(services) == 0 {
		services = DefaultServices
	}
	for _, s := range services {
		if handoffs[s] == nil {
			return nil, fmt.Errorf("no login is known for service %q (known: %s)", s, strings.Join(Known(), ", "))
		}
		if cfg.Catalogue[s] == nil {
			return nil, fmt.Errorf("service %q is not in the service catalogue", s)
		}
	}
	if cfg.Catalogue["iaaa"] == nil {
		return nil, errors.New("the service catalogue has no iaaa entry (the IAAA origin)")
	}
	ss := &session{cfg: cfg, cred: cred, jar: map[string]map[string]string{}}
	ss.secret(cred.Password)
	ss.secret(cred.TOTP)
	ss.hc = ss.client()
	res := &Result{Sessions: map[string]*proxy.ServiceSecrets{}, Failed: map[string]error{}}
	if err := ss.precheck(ctx); err != nil {
		return nil, ss.scrubErr(err)
	}
	res.Mode = ss.mode
	for _, s := range services {
		sec, err := handoffs[s](ctx, ss, s)
		if err != nil {
			var ie *IAAAError
			if errors.As(err, &ie) && len(res.Sessions) == 0 && len(res.Failed) == 0 {
				return nil, ss.scrubErr(err)
			}
			res.Failed[s] = ss.scrubErr(err)
			ss.progress("%s: failed", s)
			continue
		}
		res.Sessions[s] = sec
		ss.progress("%s: session stored (%s)", s, describe(sec))
	}
	res.Name = ss.name
	return res, nil
}

func describe(s *proxy.ServiceSecrets) string {
	var parts []string
	for _, n := range sortedNames(s.Cookies) {
		parts = append(parts, "cookie "+n)
	}
	for _, n := range sortedNames(s.Headers) {
		parts = append(parts, "header "+n)
	}
	return strings.Join(parts, ", ")
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (ss *session) progress(format string, args ...any) {
	if ss.cfg.Progress != nil {
		fmt.Fprintln(ss.cfg.Progress, ss.scrub(fmt.Sprintf(format, args...)))
	}
}

func (ss *session) secret(v string) {
	if len(v) >= 4 {
		ss.secrets = append(ss.secrets, v)
	}
}

// scrub replaces every secret the login has seen (and its URL-escaped
// form) in s.
func (ss *session) scrub(s string) string {
	for _, v := range ss.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
		s = strings.ReplaceAll(s, url.QueryEscape(v), "[redacted]")
	}
	return s
}

type scrubbed struct {
	msg   string
	inner error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.inner }

func (ss *session) scrubErr(err error) error {
	if err == nil {
		return nil
	}
	var ie *IAAAError
	if errors.As(err, &ie) {
		return &scrubbed{msg: ss.scrub(err.Error()), inner: &IAAAError{Code: ie.Code, Msg: ss.scrub(ie.Msg)}}
	}
	return &scrubbed{msg: ss.scrub(err.Error())}
}

func (ss *session) origin(service string) string { return ss.cfg.Catalogue[service].Origin }

// client is the login's HTTP client: the catalogue's origins through the
// --resolve mapping, --ca roots for the mapped hosts only.
func (ss *session) client() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if a, ok := ss.cfg.Resolve[addr]; ok {
			addr = a
		}
		return d.DialContext(ctx, network, addr)
	}
	protos := new(http.Protocols)
	protos.SetHTTP1(true)
	t := &http.Transport{Proxy: nil, DialContext: dial, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second, MaxResponseHeaderBytes: 64 << 10, Protocols: protos}
	if len(ss.cfg.ResolveCA) > 0 {
		roots, err := x509.SystemCertPool()
		if err != nil || roots == nil {
			roots = x509.NewCertPool()
		}
		roots.AppendCertsFromPEM(ss.cfg.ResolveCA)
		ss.roots = roots
		t.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			conn, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host, NextProtos: []string{"http/1.1"}}
			if _, ok := ss.cfg.Resolve[addr]; ok {
				cfg.RootCAs = ss.roots
			}
			tc := tls.Client(conn, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, err
			}
			return tc, nil
		}
	}
	return &http.Client{Transport: t, Timeout: requestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type answer struct {
	status   int
	location *url.URL
	body     []byte
}

// do sends one request (no redirect followed), with the origin's cookies
// from the login's jar, and keeps the cookies the answer sets.
func (ss *session) do(ctx context.Context, method, rawURL string, form url.Values, hdr map[string]string) (*answer, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("bad URL")
	}
	o := u.Scheme + "://" + u.Host
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		return nil, errors.New("bad request")
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	for _, n := range sortedNames(ss.jar[o]) {
		req.AddCookie(&http.Cookie{Name: n, Value: ss.jar[o][n]})
	}
	what := method + " " + o + u.Path
	resp, err := ss.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %v", what, err)
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("%s: the answer is over %d bytes", what, maxBody)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "" {
			continue
		}
		if ss.jar[o] == nil {
			ss.jar[o] = map[string]string{}
		}
		if c.MaxAge < 0 {
			delete(ss.jar[o], c.Name)
			continue
		}
		ss.jar[o][c.Name] = c.Value
		ss.secret(c.Value)
	}
	a := &answer{status: resp.StatusCode, body: data}
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		l, err := u.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("%s: a redirect to a bad URL", what)
		}
		a.location = l
		for _, vs := range l.Query() {
			for _, v := range vs {
				ss.secret(v)
			}
		}
	}
	return a, nil
}

// follow GETs rawURL and follows redirects while they stay on the same
// origin, returning the last answer (a redirect elsewhere is returned).
func (ss *session) follow(ctx context.Context, rawURL string) (*answer, error) {
	cur := rawURL
	for i := 0; ; i++ {
		a, err := ss.do(ctx, "GET", cur, nil, nil)
		if err != nil {
			return nil, err
		}
		if a.location == nil || i == maxRedirects {
			return a, nil
		}
		from, _ := url.Parse(cur)
		if a.location.Scheme+"://"+a.location.Host != from.Scheme+"://"+from.Host || isIAAA(ss, a.location) {
			return a, nil
		}
		cur = a.location.String()
	}
}

func isIAAA(ss *session, u *url.URL) bool {
	o := ss.origin("iaaa")
	return u.Scheme+"://"+u.Host == o || strings.HasPrefix(u.Path, "/iaaa/")
}

func (ss *session) iaaaURL(path string) string { return ss.origin("iaaa") + "/iaaa/" + path }

func randFloat() string {
	var b [4]byte
	rand.Read(b[:])
	return "0." + strconv.FormatUint(uint64(b[0])<<16|uint64(b[1])<<8|uint64(b[2]), 10)
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (ss *session) ajax() map[string]string {
	return map[string]string{"X-Requested-With": "XMLHttpRequest", "Referer": ss.iaaaURL("oauth.jsp")}
}

// precheck fetches the public key and the account's second factor.
func (ss *session) precheck(ctx context.Context) error {
	a, err := ss.do(ctx, "GET", ss.iaaaURL("getPublicKey.do"), nil, ss.ajax())
	if err != nil {
		return err
	}
	var pk struct {
		Success bool   `json:"success"`
		Key     string `json:"key"`
	}
	if json.Unmarshal(a.body, &pk) != nil || !pk.Success {
		return fmt.Errorf("IAAA's getPublicKey.do did not answer with a key (HTTP %d)", a.status)
	}
	blk, _ := pem.Decode([]byte(pk.Key))
	if blk == nil {
		return errors.New("IAAA's public key is not PEM")
	}
	pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return errors.New("IAAA's public key does not parse")
	}
	k, ok := pub.(*rsa.PublicKey)
	if !ok {
		return errors.New("IAAA's public key is not RSA")
	}
	ss.key = k
	q := url.Values{"userName": {ss.cred.User}, "appId": {"portal2017"}, "_rand": {randFloat()}}
	a, err = ss.do(ctx, "GET", ss.iaaaURL("isMobileAuthen.do?"+q.Encode()), nil, ss.ajax())
	if err != nil {
		return err
	}
	var mc struct {
		Success        bool   `json:"success"`
		IsMobileAuthen bool   `json:"isMobileAuthen"`
		AuthenMode     string `json:"authenMode"`
		MobileMask     string `json:"mobileMask"`
	}
	if json.Unmarshal(a.body, &mc) != nil || !mc.Success {
		return fmt.Errorf("IAAA's isMobileAuthen.do did not answer (HTTP %d)", a.status)
	}
	switch {
	case mc.AuthenMode == "OTP":
		ss.mode = "OTP"
	case mc.IsMobileAuthen:
		ss.mode = "SMS"
	}
	ss.mobile = mc.MobileMask
	return nil
}

// code returns the second factor's code for the next oauthlogin.do.
func (ss *session) secondFactor(ctx context.Context, fresh bool) (otpCode, smsCode string, err error) {
	switch ss.mode {
	case "OTP":
		if ss.cred.TOTP != "" {
			c, err := totp.GenerateCodeCustom(ss.cred.TOTP, ss.cfg.Clock(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
			if err != nil {
				return "", "", errors.New("the TOTP secret is not valid base32")
			}
			return c, "", nil
		}
		if ss.code == "" || fresh {
			c, err := ss.ask("OTP code (手机令牌): ")
			if err != nil {
				return "", "", err
			}
			ss.code = c
		}
		return ss.code, "", nil
	case "SMS":
		if ss.code == "" || fresh {
			if err := ss.sendSMS(ctx); err != nil {
				return "", "", err
			}
			c, err := ss.ask("SMS code sent to " + ss.mobile + ": ")
			if err != nil {
				return "", "", err
			}
			ss.code = c
		}
		return "", ss.code, nil
	}
	return "", "", nil
}

func (ss *session) ask(prompt string) (string, error) {
	if ss.cfg.Prompt == nil {
		return "", errors.New("the account needs a code and there is no terminal or stdin to ask")
	}
	c, err := ss.cfg.Prompt.Secret(prompt)
	if err != nil {
		return "", err
	}
	c = strings.TrimSpace(c)
	if c == "" || len(c) > 16 {
		return "", errors.New("no code given")
	}
	ss.secret(c)
	return c, nil
}

// sendSMS asks IAAA to send the SMS code (the path is a guess, see
// docs/simcampus.md).
func (ss *session) sendSMS(ctx context.Context) error {
	a, err := ss.do(ctx, "POST", ss.iaaaURL("sendSMSCode.do"), url.Values{"userName": {ss.cred.User}, "appid": {"portal2017"}}, ss.ajax())
	if err != nil {
		return err
	}
	var r struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
	if json.Unmarshal(a.body, &r) != nil {
		return fmt.Errorf("IAAA's sendSMSCode.do did not answer (HTTP %d)", a.status)
	}
	if !r.Success {
		return fmt.Errorf("IAAA did not send the SMS code: %s", r.Message)
	}
	return nil
}

// token runs oauthlogin.do for appid and redirUrl and returns the token.
// A code typed for an earlier app that IAAA now refuses is asked again,
// once.
func (ss *session) token(ctx context.Context, appid, redir string) (string, error) {
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, ss.key, []byte(ss.cred.Password))
	if err != nil {
		return "", errors.New("cannot encrypt the password with IAAA's key")
	}
	enc := base64.StdEncoding.EncodeToString(ct)
	reused := ss.code != "" && ss.cred.TOTP == ""
	for try := 0; try < 2; try++ {
		otpCode, smsCode, err := ss.secondFactor(ctx, try > 0)
		if err != nil {
			return "", err
		}
		form := url.Values{"appid": {appid}, "userName": {ss.cred.User}, "password": {enc}, "randCode": {""},
			"smsCode": {smsCode}, "otpCode": {otpCode}, "redirUrl": {redir}, "remTrustChk": {"false"}}
		a, err := ss.do(ctx, "POST", ss.iaaaURL("oauthlogin.do"), form, ss.ajax())
		if err != nil {
			return "", err
		}
		var r struct {
			Success bool   `json:"success"`
			Token   string `json:"token"`
			Errors  struct {
				Code string `json:"code"`
				Msg  string `json:"msg"`
			} `json:"errors"`
		}
		if json.Unmarshal(a.body, &r) != nil {
			return "", fmt.Errorf("IAAA's oauthlogin.do did not answer JSON (HTTP %d)", a.status)
		}
		if r.Success && r.Token != "" {
			ss.secret(r.Token)
			ss.progress("iaaa: %s signed in", appid)
			return r.Token, nil
		}
		e := &IAAAError{Code: r.Errors.Code, Msg: r.Errors.Msg}
		if e.Code == "" {
			e.Code = "?"
		}
		if reused && try == 0 && (e.Code == "E05" || e.Code == "E06") {
			continue // the code typed earlier is spent: ask for a new one
		}
		return "", e
	}
	return "", errors.New("unreachable")
}

// handoff is one service's login: IAAA, then its hand-off, returning the
// session to store.
type handoff func(ctx context.Context, ss *session, service string) (*proxy.ServiceSecrets, error)

var handoffs = map[string]handoff{
	"portal":   portalLogin,
	"card":     cardLogin,
	"xiaobei":  xiaobeiLogin,
	"treehole": treeholeLogin,
	"wproc": direct("wproc", "/site/login/cas-login", func(o string) string {
		return "?redirect_url=" + url.QueryEscape(o+"/v2/")
	}),
	"course":   direct("blackboard", "/webapps/bb-sso-BBLEARN/execute/authValidate/campusLogin", nil),
	"elective": direct("syllabus", "/elective2008/ssoLogin.do", nil),
	"bdkj":     direct("bdkj", "/login/oauth", nil),
	"cwfw":     direct("IIPF", "/WFManager/home2.jsp", nil),
}

// withToken adds _rand and token to a hand-off URL.
func withToken(raw, tok string) string {
	sep := "?"
	if strings.Contains(raw, "?") {
		sep = "&"
	}
	return raw + sep + "_rand=" + randFloat() + "&token=" + url.QueryEscape(tok)
}

// direct is the plain hand-off: IAAA with appid and the service's
// redirUrl, then GET redirUrl?_rand=&token=, which sets the cookies.
func direct(appid, path string, redirQuery func(origin string) string) handoff {
	return func(ctx context.Context, ss *session, service string) (*proxy.ServiceSecrets, error) {
		redir := ss.origin(service) + path
		q := ""
		if redirQuery != nil {
			q = redirQuery(ss.origin(service))
		}
		tok, err := ss.token(ctx, appid, redir+q)
		if err != nil {
			return nil, err
		}
		if _, err := ss.follow(ctx, withToken(redir, tok)); err != nil {
			return nil, err
		}
		return ss.stored(service, nil)
	}
}

// stored picks the service's session from the jar: the cookies its
// catalogue entry attaches (every one for "*"), and headers.
func (ss *session) stored(service string, headers map[string]string) (*proxy.ServiceSecrets, error) {
	svc := ss.cfg.Catalogue[service]
	out := &proxy.ServiceSecrets{Cookies: map[string]string{}, Headers: map[string]string{}}
	all := false
	want := map[string]bool{}
	for _, c := range svc.Auth.Cookies {
		all = all || c == "*"
		want[c] = true
	}
	for n, v := range ss.jar[svc.Origin] {
		if all || want[n] {
			out.Cookies[n] = v
		}
	}
	hw := map[string]bool{}
	for _, h := range svc.Auth.Headers {
		hw[http.CanonicalHeaderKey(h)] = true
	}
	for n, v := range headers {
		if hw[http.CanonicalHeaderKey(n)] {
			out.Headers[n] = v
		}
	}
	if len(out.Cookies) == 0 && len(out.Headers) == 0 {
		return nil, fmt.Errorf("the %s hand-off set no session the catalogue attaches", service)
	}
	return out, nil
}

// portal2017 signs in to the portal (§1a step 2): the SESSION cookie that
// the card and xiaobei hand-offs start from.
func (ss *session) portal2017(ctx context.Context) error {
	if ss.portal {
		return nil
	}
	redir := ss.origin("portal") + "/portal2017/ssoLogin.do"
	tok, err := ss.token(ctx, "portal2017", redir)
	if err != nil {
		return err
	}
	if _, err := ss.follow(ctx, withToken(redir, tok)); err != nil {
		return err
	}
	if len(ss.jar[ss.origin("portal")]) == 0 {
		return errors.New("the portal's ssoLogin.do set no session")
	}
	ss.portal = true
	return nil
}

// portalLogin: portal2017, then publicQuery's session from the portal
// session (§4A: portletRedir.do?portletId=coursetable).
func portalLogin(ctx context.Context, ss *session, service string) (*proxy.ServiceSecrets, error) {
	if err := ss.portal2017(ctx); err != nil {
		return nil, err
	}
	if _, err := ss.follow(ctx, ss.origin("portal")+"/portal2017/util/portletRedir.do?portletId=coursetable"); err != nil {
		return nil, err
	}
	return ss.stored(service, nil)
}

// handOn GETs a portal2017 hand-on path and returns its redirect, which
// must lead to the service's origin.
func (ss *session) handOn(ctx context.Context, path, service string) (*url.URL, error) {
	if err := ss.portal2017(ctx); err != nil {
		return nil, err
	}
	a, err := ss.do(ctx, "GET", ss.origin("portal")+path, nil, nil)
	if err != nil {
		return nil, err
	}
	if a.location == nil || a.location.Scheme+"://"+a.location.Host != ss.origin(service) {
		return nil, fmt.Errorf("the portal's %s did not hand on to %s (HTTP %d)", strings.SplitN(path, "?", 2)[0], service, a.status)
	}
	return a.location, nil
}

// cardLogin: portal2017, redirectToCard.do, the CAS exchange whose second
// redirect carries synjones-auth=<JWT> (§1a).
func cardLogin(ctx context.Context, ss *session, service string) (*proxy.ServiceSecrets, error) {
	loc, err := ss.handOn(ctx, "/portal2017/util/redirectToCard.do", service)
	if err != nil {
		return nil, err
	}
	for i := 0; i < maxRedirects; i++ {
		if jwt := loc.Query().Get("synjones-auth"); jwt != "" {
			ss.secret(jwt)
			return ss.stored(service, map[string]string{"synjones-auth": "bearer " + jwt})
		}
		a, err := ss.do(ctx, "GET", loc.String(), nil, nil)
		if err != nil {
			return nil, err
		}
		if a.location == nil {
			return nil, fmt.Errorf("the card's CAS login answered HTTP %d without the synjones-auth token", a.status)
		}
		if a.location.Scheme+"://"+a.location.Host != ss.origin(service) && a.location.Query().Get("synjones-auth") == "" {
			return nil, errors.New("the card's CAS login sent the login elsewhere")
		}
		loc = a.location
	}
	return nil, errors.New("the card's CAS login redirected too often")
}

// xiaobeiLogin: portal2017, appSysRedir.do?appId=xiaobei, whose landing
// URL carries token=, then api_validate (§7), which names the user.
func xiaobeiLogin(ctx context.Context, ss *session, service string) (*proxy.ServiceSecrets, error) {
	loc, err := ss.handOn(ctx, "/portal2017/util/appSysRedir.do?appId=xiaobei", service)
	if err != nil {
		return nil, err
	}
	tok := loc.Query().Get("token")
	if tok == "" {
		return nil, errors.New("the xiaobei landing URL carries no token")
	}
	a, err := ss.do(ctx, "GET", ss.origin(service)+"/api/api_validate?token="+url.QueryEscape(tok), nil, nil)
	if err != nil {
		return nil, err
	}
	var v struct {
		CampusID string `json:"campus_id"`
		Name     string `json:"name"`
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &v) != nil {
		return nil, fmt.Errorf("xiaobei's api_validate answered HTTP %d", a.status)
	}
	if v.Name != "" && len(v.Name) <= 256 {
		ss.name = v.Name
	}
	return ss.stored(service, nil)
}

// treeholeLogin: IAAA "PKU Helper", cas_iaaa_login, whose redirect to
// /ch/web/iaaa_success carries the JWT (§5).
func treeholeLogin(ctx context.Context, ss *session, service string) (*proxy.ServiceSecrets, error) {
	uuid := randHex(6)
	redir := ss.origin(service) + "/chapi/cas_iaaa_login?version=3&uuid=" + uuid + "&plat=web"
	tok, err := ss.token(ctx, "PKU Helper", redir)
	if err != nil {
		return nil, err
	}
	a, err := ss.do(ctx, "GET", withToken(redir, tok), nil, nil)
	if err != nil {
		return nil, err
	}
	if a.location == nil || a.location.Query().Get("token") == "" {
		return nil, fmt.Errorf("the treehole's cas_iaaa_login answered HTTP %d without a token", a.status)
	}
	jwt := a.location.Query().Get("token")
	ss.secret(jwt)
	// The uuid header's prefix is not recorded (a guess: a random UUID).
	prefix := randHex(4) + "-" + randHex(2) + "-" + randHex(2) + "-" + randHex(2)
	return ss.stored(service, map[string]string{"Authorization": "Bearer " + jwt,
		"uuid": "Web_PKUHOLE_2.0.0_WEB_UUID_" + prefix + "-" + uuid})
}
