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

func pairDoc(b *testing.B, origin string) *host.Document {
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
	h := host.New(host.Config{
		Catalogue: proxy.Builtin().Merge(proxy.Catalogue{"portal": &proxy.Service{Name: "portal", Origin: origin, Auth: proxy.Auth{Cookies: []string{"JSESSIONID"}}}}),
		Keystore:  proxy.MemKeystore(proxy.Secrets{"portal": {Cookies: map[string]string{"JSESSIONID": "s3cr3t-session"}}}),
	})
	d, l := h.Load(p)
	if l.HasErrors() {
		b.Fatal(l.Err())
	}
	return d
}

// handwritten is the same two tools in plain Go: net/http with the
// session cookie, encoding/json and gojq, goquery.
type handwritten struct {
	origin string
	client *http.Client
	code   *gojq.Code
}

func (h *handwritten) get(path string, query url.Values) ([]byte, error) {
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
// (interp-allocs, hand-allocs). Run it with -count 10 and take the
// medians of the runs' figures.
func BenchmarkPair(b *testing.B) {
	origin := pairServer(b)
	d := pairDoc(b, origin)
	q, err := gojq.Parse(pairProgram)
	if err != nil {
		b.Fatal(err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		b.Fatal(err)
	}
	hw := &handwritten{origin: origin, client: &http.Client{}, code: code}
	input := map[string]any{"building": "二教"}
	for _, tc := range []struct {
		name, tool string
		hand       func() ([]byte, error)
	}{{"json", "rooms", hw.json}, {"html", "page", hw.html}} {
		b.Run(tc.name, func(b *testing.B) {
			interp := func() {
				res, err := d.Run(context.Background(), host.Call{Tool: tc.tool, Input: input, Checked: true})
				if err != nil || len(res.JSON) < 50 {
					b.Fatal(err, string(res.JSON))
				}
			}
			hand := func() {
				out, err := tc.hand()
				if err != nil || len(out) < 50 {
					b.Fatal(err, string(out))
				}
			}
			ia := testing.AllocsPerRun(50, interp)
			ha := testing.AllocsPerRun(50, hand)
			var ti, th []time.Duration
			i := 0
			for b.Loop() {
				// Alternate which goes first: neither always runs
				// on the other's warm caches.
				if i%2 == 0 {
					ti = append(ti, timed(interp))
					th = append(th, timed(hand))
				} else {
					th = append(th, timed(hand))
					ti = append(ti, timed(interp))
				}
				i++
			}
			mi, mh := median(ti), median(th)
			b.ReportMetric(float64(mi.Nanoseconds()), "interp-ns")
			b.ReportMetric(float64(mh.Nanoseconds()), "hand-ns")
			if mh > 0 {
				b.ReportMetric(float64(mi)/float64(mh), "ratio")
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
