package proxy

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuiltinIsValid(t *testing.T) {
	c := Builtin()
	require.NoError(t, c.Validate())
	for _, name := range []string{"portal", "card", "treehole", "wproc", "xiaobei", "course", "elective", "dean", "iaaa", "library", "bdkj", "its"} {
		s, ok := c[name]
		require.True(t, ok, name)
		assert.Equal(t, name, s.Name)
		assert.True(t, strings.HasPrefix(s.Origin, "https://"), name)
	}
	assert.Equal(t, []string{"synjones-auth"}, c["card"].Auth.Headers)
	assert.Equal(t, "h5", c["card"].Headers["synaccesssource"])
	// Fresh copies: changing one does not change the next.
	c["card"].Origin = "x"
	assert.Equal(t, "https://bdcard.pku.edu.cn", Builtin()["card"].Origin)
}

func TestLoadServicesContractShape(t *testing.T) {
	p := writeFile(t, "services.yaml", `
card:
  origin: http://127.0.0.1:18081      # scheme://host[:port]
  auth:
    cookies: [JSESSIONID]
    headers: [Authorization]
  login:
    redirect: /iaaa/login
    status: [401]
    json: {code: [401, "E01"]}
  csrf: {cookie: XSRF-TOKEN, header: X-XSRF-TOKEN}
  headers: {synaccesssource: h5}
  query: {synAccessSource: h5}
  concurrency: 2
dean:
  origin: https://dean.pku.edu.cn
`, 0o644)
	c, err := LoadServices(p)
	require.NoError(t, err)
	card := c["card"]
	assert.Equal(t, "card", card.Name)
	assert.Equal(t, "http://127.0.0.1:18081", card.Origin)
	assert.Equal(t, []string{"JSESSIONID"}, card.Auth.Cookies)
	assert.Equal(t, []string{"Authorization"}, card.Auth.Headers)
	assert.Equal(t, "/iaaa/login", card.Login.Redirect)
	assert.Equal(t, []int{401}, card.Login.Status)
	assert.Equal(t, []string{"401", "E01"}, card.Login.JSON["code"])
	assert.Equal(t, CSRF{Cookie: "XSRF-TOKEN", Header: "X-XSRF-TOKEN"}, card.CSRF)
	assert.Equal(t, 2, card.Concurrency)

	m := Builtin().Merge(c)
	assert.Equal(t, "http://127.0.0.1:18081", m["card"].Origin)
	assert.Equal(t, "https://portal.pku.edu.cn", m["portal"].Origin)
	assert.Equal(t, "https://bdcard.pku.edu.cn", Builtin()["card"].Origin)
}

func TestLoadServicesStrict(t *testing.T) {
	for text, want := range map[string]string{
		"card:\n  origin: https://a.example\n  oigin: x\n":                     `unknown key "oigin"`,
		"card:\n  auth: {cookie: [a]}\n  origin: https://a.example\n":          `unknown key "cookie"`,
		"card:\n  auth: {cookies: [a]}\n":                                      `service "card" needs "origin"`,
		"card:\n  origin: http://example.com\n":                                `must use https`,
		"card:\n  origin: https://a.example/path\n":                            `scheme://host[:port] only`,
		"card:\n  origin: https://u:p@a.example\n":                             `scheme://host[:port] only`,
		"card:\n  origin: https://2130706433\n":                                `canonical dotted-quad`,
		"card:\n  origin: ftp://a.example\n":                                   `https://`,
		"card:\n  origin: https://a.example:99999\n":                           `bad port`,
		"card:\n  origin: https://a.example\n  auth: {headers: [Host]}\n":      `cannot be an auth header`,
		"card:\n  origin: https://a.example\n  headers: {Cookie: x}\n":         `not allowed`,
		"card:\n  origin: https://a.example\n  login: {redirect: evil}\n":      `login redirect`,
		"card:\n  origin: https://a.example\n  login: {status: [99]}\n":        `not an HTTP status`,
		"card:\n  origin: https://a.example\n  csrf: {cookie: a}\n":            `both cookie and header`,
		"card:\n  origin: https://a.example\n  concurrency: 100\n":             `between 0 and 64`,
		"Card:\n  origin: https://a.example\n":                                 `service name "Card"`,
		"card:\n  origin: !!str https://a.example\n":                           `tags`,
		"card: {origin: https://a.example}\ncard: {origin: https://b.example}": `duplicate key`,
	} {
		p := writeFile(t, "services.yaml", text, 0o644)
		_, err := LoadServices(p)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want, text)
		assert.Contains(t, err.Error(), p+":", text)
	}
	_, err := LoadServices("/nonexistent/services.yaml")
	require.Error(t, err)
}

func TestLoopbackOriginsMayBeHTTP(t *testing.T) {
	for _, o := range []string{"http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9", "http://127.9.9.9"} {
		_, err := compileService("x", &Service{Origin: o})
		require.NoError(t, err, o)
	}
	for _, o := range []string{"http://10.0.0.1", "http://example.com", "http://localhost.example.com"} {
		_, err := compileService("x", &Service{Origin: o})
		require.Error(t, err, o)
	}
}

func TestMatchesLogin(t *testing.T) {
	cs, err := compileService("portal", Builtin()["portal"])
	require.NoError(t, err)
	for u, want := range map[string]bool{
		"https://iaaa.pku.edu.cn/iaaa/oauth.jsp?appID=portal2017": true,
		"https://IAAA.pku.edu.cn:443/iaaa/x":                      true,
		"http://iaaa.pku.edu.cn/iaaa/x":                           false,
		"https://iaaa.pku.edu.cn.evil.com/iaaa/x":                 false,
		"https://evil.com/iaaa/x":                                 false,
		"https://portal.pku.edu.cn/portal2017/login.jsp":          true,
		"https://anything.example/portal2017/login.jsp?x=1":       true,
		"https://portal.pku.edu.cn/portal2017/index.jsp":          false,
	} {
		pu, err := url.Parse(u)
		require.NoError(t, err)
		assert.Equal(t, want, cs.matchesLogin(pu), u)
	}
}
