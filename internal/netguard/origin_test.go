package netguard

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSameOrigin(t *testing.T) {
	mu := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"https://github.com/a", "https://github.com/b?x=1", true},
		{"https://github.com", "HTTPS://GitHub.COM:443/x", true},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/y", true},
		{"http://[::1]:80/", "http://[0:0::1]/", true},
		{"https://bücher.example/", "https://xn--bcher-kva.example/", true},
		{"https://github.com", "http://github.com", false},
		{"https://github.com", "https://github.com:8443", false},
		{"https://github.com", "https://www.github.com", false},
		{"http://127.0.0.1:8080", "http://localhost:8080", false},
		{"https://github.com.", "https://github.com.", false}, // a host CanonicalHost refuses is no origin
		{"https://2130706433/", "https://2130706433/", false},
	} {
		assert.Equal(t, c.same, SameOrigin(mu(c.a), mu(c.b)), "%s %s", c.a, c.b)
	}
	assert.False(t, SameOrigin(nil, mu("https://github.com")))
}
