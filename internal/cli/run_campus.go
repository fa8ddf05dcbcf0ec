package cli

import (
	"fmt"
	"time"

	"github.com/pkuinfo/harness/internal/simcampus"
	"github.com/pkuinfo/harness/proxy"
)

// campusSealed names --campus in the proxy's messages: the simulated
// campus is sealed, nothing leaves loopback, and a catalogue service it
// does not simulate fails naming the service (proxy.Config.Sealed).
const campusSealed = "the simulated campus (--campus)"

// startCampus starts the simulated campus for one run and returns its
// services (to lay over the built-in catalogue) and its demo session, in
// memory; stop ends the campus.
func startCampus(clock func() time.Time) (proxy.Catalogue, proxy.Secrets, func(), error) {
	c, err := simcampus.Start(simcampus.WithClock(clock))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the simulated campus did not start: %v", err)
	}
	cat := proxy.Catalogue{}
	for name, e := range c.Services() {
		cat[name] = &proxy.Service{
			Name:   name,
			Origin: e.Origin,
			Auth:   proxy.Auth{Cookies: e.Auth.Cookies, Headers: e.Auth.Headers},
			Login:  proxy.Login{Redirect: e.Login.Redirect, Status: e.Login.Status, JSON: e.Login.JSON},
		}
	}
	sec := proxy.Secrets{}
	for name, e := range c.Secrets() {
		sec[name] = &proxy.ServiceSecrets{Cookies: e.Cookies, Headers: e.Headers}
	}
	if err := cat.Validate(); err != nil {
		c.Close()
		return nil, nil, nil, fmt.Errorf("the simulated campus's services: %v", err)
	}
	return cat, sec, func() { c.Close() }, nil
}
