// Package simcampus is the simulated campus: real HTTP servers on loopback,
// one per campus service (each real service has its own origin), that answer
// with the shapes the real services use and check the session as they do.
//
// A request with the demo session of Secrets gets data; a missing or wrong
// session gets what the real service does when a session has expired: the
// portal redirects to the IAAA login page, the card answers HTTP 401 with
// {"code":401,"success":false,"message":"token失效"}, the treehole answers
// HTTP 401, wproc redirects to /site/login/cas-login and xiaobei answers
// HTTP 401. The free-classroom and notice endpoints, the dean's office pages
// and the (synthetic) canteen crowd need no session.
//
// Fixtures live in fixtures/<service>/ (embedded); the ones that depend on the
// date are text/template files rendered against the campus clock (WithClock),
// so "today" always has data. fixtures/README.md says which shapes are facts
// about the real services and which are guesses or synthetic.
//
// Start a campus, hand Services and Secrets (or their YAML) to the proxy, and
// Close it when done:
//
//	c, err := simcampus.Start(simcampus.WithClock(now))
//	defer c.Close()
//	os.WriteFile(servicesPath, c.ServicesYAML(), 0o644)
//	os.WriteFile(secretsPath, c.SecretsYAML(), 0o600)
package simcampus
