package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/itchyny/gojq"
	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
)

// The engine's cost (issue 13): a JSON tool and an HTML tool run by the
// host (input check, the proxy's signing and redaction, the steps, the
// result's redaction and cut) and by plain Go, against one loopback
// server. The pair is interleaved in one benchmark loop, each iteration
// timing one run of each (in alternating order), because the machine's
// noise drifts over seconds: blocks of A runs followed by blocks of B runs
// would measure the machine, not the engine.

const pairJSON = `{"rooms":[{"name":"二教101","capacity":120},{"name":"二教203","capacity":60},{"name":"二教305","capacity":90}]}`

const pairHTML = `<html><body><table class="rooms">
<tr><td class="name">二教101</td><td class="seats">120</td></tr>
<tr><td class="name">二教203</td><td class="seats">60</td></tr>
<tr><td class="name">二教305</td><td class="seats">90</td></tr>
</table></body></html>`

const pairProgram = `[.rooms[] | {room: .name, seats: .capacity}]`

func pairServer(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("JSESSIONID"); err != nil || c.Value != "s3cr3t-session" {
			http.Error(w, "no session", http.StatusUnauthorized)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/page") {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, pairHTML)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, pairJSON)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

func pairDoc(b *testing.B, origin string) (*host.Document, *manifest.Plugin) {
	fs := manifest.Files{
		"PLUGIN.md": []byte("---\nid: t\nname: T\ndescription: A test document.\nversion: 1.0.0\naccess:\n  campus: [portal]\n---\nInstructions.\n"),
		"tools/rooms.yaml": []byte("description: T.\neffect: read\ninput:\n  type: object\n  properties: { building: { type: string } }\n  required: [building]\nsteps:\n" +
			"  - request:\n      service: portal\n      path: /api/classrooms/${ $input.building }/free\n      query: { lang: zh }\n" +
			"  - jq: '" + strings.ReplaceAll(pairProgram, ".rooms", ".body.rooms") + "'\n    as: rooms\n" +
			"  - return: '{building: $input.building, rooms: $rooms}'\n"),
		"tools/page.yaml": []byte("description: T.\neffect: read\ninput:\n  type: object\n  properties: { building: { type: string } }\n  required: [building]\nsteps:\n" +
			"  - request:\n      service: portal\n      path: /api/classrooms/${ $input.building }/page\n" +
			"  - html:\n      select: table.rooms tr\n      fields: { room: td.name, seats: td.seats }\n    as: rooms\n" +
			"  - return: '{building: $input.building, rooms: $rooms}'\n"),
	}
	p, l := manifest.Parse(fs)
	if l.HasErrors() {
		b.Fatal(l.Err())
	}
	cat, keys := pairCampus(origin)
	h := host.New(host.Config{Catalogue: cat, Keystore: keys})
	d, l := h.Load(p)
	if l.HasErrors() {
		b.Fatal(l.Err())
	}
	return d, p
}

// pairCampus is the pair's catalogue and keystore: one service, one
// session cookie.
func pairCampus(origin string) (proxy.Catalogue, proxy.Keystore) {
	return proxy.Builtin().Merge(proxy.Catalogue{"portal": &proxy.Service{Name: "portal", Origin: origin, Auth: proxy.Auth{Cookies: []string{"JSESSIONID"}}}}),
		proxy.MemKeystore(proxy.Secrets{"portal": {Cookies: map[string]string{"JSESSIONID": "s3cr3t-session"}}})
}

// handwritten is the same two tools in plain Go: net/http with the
// session cookie, encoding/json and gojq, goquery. With px set, its
// request goes through the proxy instead, as a hand-written Go tool of a
// host must (the proxy is the only road to a campus service, and only it
// holds the session): that pair measures the interpreter alone.
type handwritten struct {
	origin string
	client *http.Client
	code   *gojq.Code
	px     *proxy.Proxy
	access manifest.Access
}

func (h *handwritten) get(path string, query url.Values) ([]byte, error) {
	if h.px != nil {
		c := h.px.NewCall("t", h.access)
		resp, err := c.Do(context.Background(), &proxy.Request{Service: "portal", Path: "/api/classrooms/" + url.PathEscape("二教") + path, Query: query})
		if err != nil {
			return nil, err
		}
		if resp.Status != 200 {
			return nil, fmt.Errorf("status %d", resp.Status)
		}
		return resp.Body, nil
	}
	u := h.origin + "/api/classrooms/" + url.PathEscape("二教") + path
	if query != nil {
		u += "?" + query.Encode()
	}
	req, _ := http.NewRequest("GET", u, nil)
	req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: "s3cr3t-session"})
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 4<<20))
}

func (h *handwritten) json() ([]byte, error) {
	body, err := h.get("/free", url.Values{"lang": {"zh"}})
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	rooms, _ := h.code.Run(v).Next()
	return json.Marshal(map[string]any{"building": "二教", "rooms": rooms})
}

func (h *handwritten) html() ([]byte, error) {
	body, err := h.get("/page", nil)
	if err != nil {
		return nil, err
	}
	d, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	var rooms []any
	d.Find("table.rooms tr").Each(func(_ int, s *goquery.Selection) {
		rooms = append(rooms, map[string]any{
			"room":  strings.TrimSpace(s.Find("td.name").First().Text()),
			"seats": strings.TrimSpace(s.Find("td.seats").First().Text()),
		})
	})
	return json.Marshal(map[string]any{"building": "二教", "rooms": rooms})
}

// BenchmarkPair reports, per tool, the interpreted run's and the
// hand-written run's median time (interp-ns, hand-ns), their ratio
// (ratio: interp-ns / hand-ns), and their allocations per call
// (interp-allocs, hand-allocs). hand-proxy-ns and ratio-proxy are the same
// hand-written tool with its request through the proxy (sign, filter,
// redact), as a host's Go tool must send it: that ratio is the
// interpreter's own cost, the proxy's being on both sides. The three are
// timed in one loop, in rotating order. Run it with -count 10 and take
// the medians of the runs' figures.
func BenchmarkPair(b *testing.B) {
	origin := pairServer(b)
	d, p := pairDoc(b, origin)
	q, err := gojq.Parse(pairProgram)
	if err != nil {
		b.Fatal(err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		b.Fatal(err)
	}
	hw := &handwritten{origin: origin, client: &http.Client{}, code: code}
	cat, keys := pairCampus(origin)
	hp := &handwritten{code: code, px: proxy.New(proxy.Config{Catalogue: cat, Keystore: keys}), access: p.Access}
	input := map[string]any{"building": "二教"}
	for _, tc := range []struct {
		name, tool     string
		hand, viaProxy func() ([]byte, error)
	}{{"json", "rooms", hw.json, hp.json}, {"html", "page", hw.html, hp.html}} {
		b.Run(tc.name, func(b *testing.B) {
			interp := func() {
				res, err := d.Run(context.Background(), host.Call{Tool: tc.tool, Input: input, Checked: true})
				if err != nil || len(res.JSON) < 50 {
					b.Fatal(err, string(res.JSON))
				}
			}
			handRun := func(f func() ([]byte, error)) func() {
				return func() {
					out, err := f()
					if err != nil || len(out) < 50 {
						b.Fatal(err, string(out))
					}
				}
			}
			hand, viaProxy := handRun(tc.hand), handRun(tc.viaProxy)
			ia := testing.AllocsPerRun(50, interp)
			ha := testing.AllocsPerRun(50, hand)
			runs := []func(){interp, hand, viaProxy}
			times := make([][]time.Duration, len(runs))
			i := 0
			for b.Loop() {
				// Rotate which goes first: none always runs on
				// another's warm caches.
				for k := range runs {
					j := (i + k) % len(runs)
					times[j] = append(times[j], timed(runs[j]))
				}
				i++
			}
			mi, mh, mp := median(times[0]), median(times[1]), median(times[2])
			b.ReportMetric(float64(mi.Nanoseconds()), "interp-ns")
			b.ReportMetric(float64(mh.Nanoseconds()), "hand-ns")
			b.ReportMetric(float64(mp.Nanoseconds()), "hand-proxy-ns")
			if mh > 0 && mp > 0 {
				b.ReportMetric(float64(mi)/float64(mh), "ratio")
				b.ReportMetric(float64(mi)/float64(mp), "ratio-proxy")
			}
			b.ReportMetric(ia, "interp-allocs")
			b.ReportMetric(ha, "hand-allocs")
		})
	}
}

func timed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
