package campuslogin

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/simcampus"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func campus(t *testing.T) (*simcampus.Campus, proxy.Catalogue) {
	t.Helper()
	c, err := simcampus.Start()
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	cat := proxy.Catalogue{}
	for name, e := range c.Services() {
		cat[name] = &proxy.Service{Name: name, Origin: e.Origin, Entry: e.Entry,
			Auth:  proxy.Auth{Cookies: e.Auth.Cookies, Headers: e.Auth.Headers},
			Login: proxy.Login{Redirect: e.Login.Redirect, Status: e.Login.Status, JSON: e.Login.JSON}}
	}
	require.NoError(t, cat.Validate())
	return c, cat
}

// codes answers prompts from a list, recording them.
type codes struct {
	answers []string
	asked   []string
}

func (c *codes) Secret(prompt string) (string, error) {
	c.asked = append(c.asked, prompt)
	if len(c.answers) == 0 {
		return "", errors.New("no more input")
	}
	a := c.answers[0]
	c.answers = c.answers[1:]
	return a, nil
}

func nowCode(t *testing.T, secret string) string {
	c, err := totp.GenerateCodeCustom(secret, time.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	require.NoError(t, err)
	return c
}

// The whole login against the simulated IAAA: every default service's
// session works through the real proxy afterwards.
func TestLoginEveryServiceWithTOTP(t *testing.T) {
	c, cat := campus(t)
	var progress strings.Builder
	res, err := Login(context.Background(), Config{Catalogue: cat, Progress: &progress},
		Credentials{User: "2100012345", Password: simcampus.DemoPassword, TOTP: simcampus.DemoTOTPSecret}, nil)
	require.NoError(t, err)
	require.Empty(t, res.Failed)
	assert.Equal(t, "OTP", res.Mode)
	assert.Equal(t, "张测试", res.Name)
	for _, s := range DefaultServices {
		require.Contains(t, res.Sessions, s)
	}
	assert.Equal(t, 3, c.Logins(), "one IAAA login for portal, card and xiaobei; one each for treehole and wproc")
	assert.Contains(t, res.Sessions["card"].Headers["synjones-auth"], "bearer ")
	assert.Contains(t, res.Sessions["treehole"].Headers["Authorization"], "Bearer ")
	assert.NotContains(t, progress.String(), simcampus.DemoPassword)

	p := proxy.New(proxy.Config{Catalogue: cat, Keystore: proxy.MemKeystore(proxy.Secrets(res.Sessions))})
	call := p.NewCall("demo", manifest.Access{Campus: []manifest.CampusAccess{{Service: "card"}, {Service: "portal"}, {Service: "treehole"}, {Service: "wproc"}, {Service: "xiaobei"}}})
	for svc, path := range map[string]string{
		"card": "/berserker-app/ykt/tsm/queryCard", "portal": "/publicQuery/ctrl/topic/myCourseTable/getXndXqList.do",
		"treehole": "/chapi/api/v3/hole/list_comments?page=1&limit=1", "wproc": "/site/reservation/my-list-time?p=1&page_size=10&status=0",
		"xiaobei": "/api/api_activity?event_type=lecture&offset=0&limit=1",
	} {
		resp, err := call.Do(context.Background(), &proxy.Request{Service: svc, Path: path})
		require.NoError(t, err, svc)
		assert.Equal(t, 200, resp.Status, svc)
	}
}

func TestLoginRefusals(t *testing.T) {
	_, cat := campus(t)
	ctx := context.Background()
	// A wrong password: E01 (a guess: the facts list no code for it),
	// and the password is in no message.
	_, err := Login(ctx, Config{Catalogue: cat}, Credentials{User: "2100000001", Password: "wrong-password-xyz"}, []string{"portal"})
	var ie *IAAAError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "E01", ie.Code)
	assert.NotContains(t, err.Error(), "wrong-password-xyz")

	// Not activated: E02.
	_, err = Login(ctx, Config{Catalogue: cat}, Credentials{User: "2100099999", Password: simcampus.DemoPassword}, []string{"portal"})
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "E02", ie.Code)
	assert.Contains(t, err.Error(), "activated")

	// A wrong OTP code: E05.
	p := &codes{answers: []string{"000000"}}
	_, err = Login(ctx, Config{Catalogue: cat, Prompt: p}, Credentials{User: "2100012345", Password: simcampus.DemoPassword}, []string{"portal"})
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "E05", ie.Code)
	assert.Equal(t, []string{"OTP code (手机令牌): "}, p.asked)

	// A typed OTP code serves every app of the login.
	p = &codes{answers: []string{nowCode(t, simcampus.DemoTOTPSecret)}}
	res, err := Login(ctx, Config{Catalogue: cat, Prompt: p}, Credentials{User: "2100012345", Password: simcampus.DemoPassword}, []string{"portal", "treehole"})
	require.NoError(t, err)
	assert.Len(t, res.Sessions, 2)
	assert.Len(t, p.asked, 1)

	// SMS: the code is sent, then asked for.
	p = &codes{answers: []string{simcampus.DemoSMSCode}}
	res, err = Login(ctx, Config{Catalogue: cat, Prompt: p}, Credentials{User: "2100054321", Password: simcampus.DemoPassword}, []string{"wproc"})
	require.NoError(t, err)
	assert.Equal(t, "SMS", res.Mode)
	assert.Equal(t, []string{"SMS code sent to 138****0000: "}, p.asked)
	require.Contains(t, res.Sessions, "wproc")

	// Too many attempts: after MaxLoginFailures wrong passwords, E21 even
	// for the right one.
	for i := 0; i < simcampus.MaxLoginFailures; i++ {
		_, err = Login(ctx, Config{Catalogue: cat}, Credentials{User: "2100000001", Password: "bad-" + strings.Repeat("x", i+1)}, []string{"portal"})
		require.ErrorAs(t, err, &ie)
	}
	_, err = Login(ctx, Config{Catalogue: cat}, Credentials{User: "2100000001", Password: simcampus.DemoPassword}, []string{"portal"})
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "E21", ie.Code)
	assert.Contains(t, err.Error(), "wait 30 minutes")

	_, err = Login(ctx, Config{Catalogue: cat}, Credentials{User: "2100000001", Password: "x"}, []string{"nosuch"})
	require.ErrorContains(t, err, `no login is known for service "nosuch"`)
}

// No plugin path reaches the login: the packages that run documents do
// not import this one.
func TestNoPluginPathImportsTheLogin(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/pkuinfo/harness/host", "github.com/pkuinfo/harness/interpreter",
		"github.com/pkuinfo/harness/steps", "github.com/pkuinfo/harness/proxy", "github.com/pkuinfo/harness/registry",
		"github.com/pkuinfo/harness/plugintest").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.NotContains(t, string(out), "internal/campuslogin")
	assert.Contains(t, string(out), "github.com/pkuinfo/harness/proxy")
}
