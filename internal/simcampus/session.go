package simcampus

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Session names per service. The card's synjones-auth header, the treehole's
// Authorization header and the portal's login path are facts (campus facts
// §1a, §5, §0); the cookie names of the portal's publicQuery, wproc and
// xiaobei are not recorded and are guesses (JSESSIONID for a Java app,
// PHPSESSID for a PHP app, Flask's default "session").
const (
	portalCookie   = "JSESSIONID"
	cardHeader     = "synjones-auth"
	treeholeHeader = "Authorization"
	wprocCookie    = "PHPSESSID"
	xiaobeiCookie  = "session"

	iaaaLoginPath  = "/iaaa/oauth.jsp"
	wprocLoginPath = "/site/login/cas-login"
)

func (c *Campus) buildEntries() map[string]ServiceEntry {
	o := c.origins
	return map[string]ServiceEntry{
		// The IAAA is no service documents call; it is in the file so
		// that `harness login --services` finds it, every path an entry
		// point (a step never requests one).
		iaaa: {Origin: o[iaaa], Entry: []string{"/"}},
		Portal: {Origin: o[Portal], Auth: Auth{Cookies: []string{portalCookie}}, Login: Login{Redirect: iaaaLoginPath},
			Entry: []string{"/publicQuery/ssoLogin.do", "/portal2017/ssoLogin.do", "/portal2017/util/redirectToCard.do",
				"/portal2017/util/portletRedir.do", "/portal2017/util/appSysRedir.do"}},
		Card: {Origin: o[Card], Auth: Auth{Headers: []string{cardHeader}},
			Login: Login{Status: []int{http.StatusUnauthorized}, JSON: map[string][]string{"code": {"401"}}},
			Entry: []string{"/berserker-auth/"}},
		Treehole: {Origin: o[Treehole], Auth: Auth{Headers: []string{treeholeHeader}},
			Login: Login{Status: []int{http.StatusUnauthorized}},
			Entry: []string{"/chapi/cas_iaaa_login", "/ch/web/iaaa_success"}},
		Wproc: {Origin: o[Wproc], Auth: Auth{Cookies: []string{wprocCookie}}, Login: Login{Redirect: wprocLoginPath},
			Entry: []string{"/site/login/"}},
		Xiaobei: {Origin: o[Xiaobei], Auth: Auth{Cookies: []string{xiaobeiCookie}},
			Login: Login{Status: []int{http.StatusUnauthorized}},
			Entry: []string{"/api/api_validate"}},
		Dean:    {Origin: o[Dean]},
		Canteen: {Origin: o[Canteen]},
	}
}

// newSecrets makes fresh demo sessions: random values shaped like the real
// ones (a JWT for the card and the treehole, hex or base64 cookies elsewhere).
func newSecrets(now time.Time) (map[string]SecretEntry, error) {
	card, err := fakeJWT(now, "2100012345")
	if err != nil {
		return nil, err
	}
	hole, err := fakeJWT(now, "2100012345")
	if err != nil {
		return nil, err
	}
	portal, err := randHex(16)
	if err != nil {
		return nil, err
	}
	wproc, err := randHex(13)
	if err != nil {
		return nil, err
	}
	xb, err := randB64(24)
	if err != nil {
		return nil, err
	}
	return map[string]SecretEntry{
		Portal:   {Cookies: map[string]string{portalCookie: strings.ToUpper(portal)}},
		Card:     {Headers: map[string]string{cardHeader: "bearer " + card}},
		Treehole: {Headers: map[string]string{treeholeHeader: "Bearer " + hole}},
		Wproc:    {Cookies: map[string]string{wprocCookie: wproc}},
		Xiaobei:  {Cookies: map[string]string{xiaobeiCookie: "." + xb}},
	}, nil
}

func randBytes(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("simcampus: random session: %w", err)
	}
	return b, nil
}

func randHex(n int) (string, error) {
	b, err := randBytes(n)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func randB64(n int) (string, error) {
	b, err := randBytes(n)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// fakeJWT makes a JWT-shaped token: real header and claims, a random
// signature (nothing verifies it but the campus's equality check).
func fakeJWT(now time.Time, uid string) (string, error) {
	jti, err := randHex(8)
	if err != nil {
		return "", err
	}
	sig, err := randBytes(32)
	if err != nil {
		return "", err
	}
	head, _ := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{"sub": uid, "iat": now.Unix(), "exp": now.Add(24 * time.Hour).Unix(), "jti": jti})
	enc := base64.RawURLEncoding
	return enc.EncodeToString(head) + "." + enc.EncodeToString(claims) + "." + enc.EncodeToString(sig), nil
}

// sameSecret compares in constant time.
func sameSecret(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// cookieOK reports whether r carries the service's session cookie with the
// right value and the service is not set to expired.
func (c *Campus) cookieOK(r *http.Request, service, name string) bool {
	if c.isExpired(service) {
		return false
	}
	want := c.secrets[service].Cookies[name]
	for _, ck := range r.Cookies() {
		if ck.Name == name && (sameSecret(ck.Value, want) || c.mintedUser(service, name, ck.Value) != "") {
			return true
		}
	}
	return false
}

// bearerOK reports whether header carries "<scheme> <token>" equal to the
// service's secret, the scheme compared case-insensitively.
func (c *Campus) bearerOK(r *http.Request, service, header string) bool {
	if c.isExpired(service) {
		return false
	}
	want := c.secrets[service].Headers[header]
	got := r.Header.Values(header)
	if len(got) != 1 {
		return false
	}
	ws, wt, ok1 := strings.Cut(want, " ")
	gs, gt, ok2 := strings.Cut(strings.TrimSpace(got[0]), " ")
	if !ok2 || !strings.EqualFold(gs, "bearer") {
		return false
	}
	gt = strings.TrimSpace(gt)
	return ok1 && strings.EqualFold(ws, gs) && sameSecret(gt, wt) || c.mintedUser(service, header, gt) != ""
}
