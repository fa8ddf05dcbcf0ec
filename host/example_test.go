package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/registry"
)

// A Go host: a catalogue and a session in memory, a document loaded from
// its folder, a call decided and run. The portal is a loopback server that
// answers only with the session.
func Example() {
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("JSESSIONID"); err != nil || c.Value != "demo-session" {
			http.Error(w, "no session", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"rooms":[{"name":"二教101","capacity":120}]}`)
	}))
	defer portal.Close()

	h := host.New(host.Config{
		Catalogue: proxy.Catalogue{"portal": {Name: "portal", Origin: portal.URL,
			Auth: proxy.Auth{Cookies: []string{"JSESSIONID"}}, Login: proxy.Login{Status: []int{401}}}},
		Keystore: proxy.MemKeystore(proxy.Secrets{"portal": {Cookies: map[string]string{"JSESSIONID": "demo-session"}}}),
	})
	files, err := manifest.ReadDir("../testdata/skeleton")
	if err != nil {
		panic(err)
	}
	p, _ := manifest.Parse(files)
	reg := h.Registry()
	if _, err := reg.AddDocument(p, registry.Community, registry.DocOptions{}); err != nil {
		panic(err)
	}
	call := registry.Call{Tool: "classrooms-example.free", Actor: registry.Agent, Input: map[string]any{"building": "二教"}}
	fmt.Println("decision:", reg.Decide(call).Reason)
	env, err := reg.Invoke(context.Background(), call, nil)
	if err != nil {
		panic(err)
	}
	out, _ := json.Marshal(env)
	fmt.Println(string(out))
	// Output:
	// decision: allowed
	// {"source":{"plugin":"classrooms-example","tool":"free","trust":"community"},"untrusted":true,"data":{"building":"二教","rooms":[{"room":"二教101","seats":120}]}}
}
