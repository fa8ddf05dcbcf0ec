package interpreter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/itchyny/gojq"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
)

// The benchmark pair of issue 3: one loopback server, a JSON tool and an
// HTML tool, run by the interpreter through the proxy and by plain Go.

const benchJSON = `{"rooms":[{"name":"二教101","capacity":120},{"name":"二教203","capacity":60},{"name":"二教305","capacity":90}]}`

const benchHTML = `<html><body><table class="rooms">
<tr><td class="name">二教101</td><td class="seats">120</td></tr>
<tr><td class="name">二教203</td><td class="seats">60</td></tr>
<tr><td class="name">二教305</td><td class="seats">90</td></tr>
</table></body></html>`

const benchProgram = `[.rooms[] | {room: .name, seats: .capacity}]`

func benchServer(b *testing.B) string {
	srv := campus(b, func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("JSESSIONID"); err != nil || c.Value != "s3cr3t-session" {
			http.Error(w, "no session", http.StatusUnauthorized)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/page") {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, benchHTML)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, benchJSON)
	})
	return srv.URL
}

func benchDoc(b testing.TB) *manifest.Plugin {
	return doc(b, "access:\n  campus: [portal]\n", map[string]string{
		"rooms": "description: T.\neffect: read\ninput:\n  type: object\n  properties: { building: { type: string } }\n  required: [building]\nsteps:\n" +
			"  - request:\n      service: portal\n      path: /api/classrooms/${ $input.building }/free\n      query: { lang: zh }\n" +
			"  - jq: '" + strings.ReplaceAll(benchProgram, ".rooms", ".body.rooms") + "'\n    as: rooms\n" +
			"  - return: '{building: $input.building, rooms: $rooms}'\n",
		"page": "description: T.\neffect: read\ninput:\n  type: object\n  properties: { building: { type: string } }\n  required: [building]\nsteps:\n" +
			"  - request:\n      service: portal\n      path: /api/classrooms/${ $input.building }/page\n" +
			"  - html:\n      select: table.rooms tr\n      fields: { room: td.name, seats: td.seats }\n    as: rooms\n" +
			"  - return: '{building: $input.building, rooms: $rooms}'\n",
	})
}

func benchProxy(origin string) *proxy.Proxy {
	return proxy.New(proxy.Config{
		Catalogue: proxy.Builtin().Merge(proxy.Catalogue{"portal": &proxy.Service{Name: "portal", Origin: origin, Auth: proxy.Auth{Cookies: []string{"JSESSIONID"}}}}),
		Keystore:  proxy.MemKeystore(proxy.Secrets{"portal": {Cookies: map[string]string{"JSESSIONID": "s3cr3t-session"}}}),
	})
}

func BenchmarkInterpreted(b *testing.B) {
	origin := benchServer(b)
	p := benchDoc(b)
	prog := compile(b, p)
	px := benchProxy(origin)
	input := map[string]any{"building": "二教"}
	for _, tool := range []string{"rooms", "page"} {
		name := map[string]string{"rooms": "json", "page": "html"}[tool]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := prog.Run(context.Background(), tool, input,
					interpreter.WithTransport(px.NewCall(p.ID, p.Access)))
				if err != nil || len(res.JSON) < 50 {
					b.Fatal(err, string(res.JSON))
				}
			}
		})
	}
}

func BenchmarkHandwritten(b *testing.B) {
	origin := benchServer(b)
	q, _ := gojq.Parse(benchProgram)
	code, _ := gojq.Compile(q)
	client := &http.Client{}
	get := func(path string, query url.Values) ([]byte, error) {
		u := origin + "/api/classrooms/" + url.PathEscape("二教") + path
		if query != nil {
			u += "?" + query.Encode()
		}
		req, _ := http.NewRequest("GET", u, nil)
		req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: "s3cr3t-session"})
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("status %d", resp.StatusCode)
		}
		return io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	}
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			body, err := get("/free", url.Values{"lang": {"zh"}})
			if err != nil {
				b.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
			rooms, _ := code.Run(v).Next()
			out, _ := json.Marshal(map[string]any{"building": "二教", "rooms": rooms})
			if len(out) < 50 {
				b.Fatal(string(out))
			}
		}
	})
	b.Run("html", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			body, err := get("/page", nil)
			if err != nil {
				b.Fatal(err)
			}
			d, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
			if err != nil {
				b.Fatal(err)
			}
			var rooms []any
			d.Find("table.rooms tr").Each(func(_ int, s *goquery.Selection) {
				rooms = append(rooms, map[string]any{
					"room":  strings.TrimSpace(s.Find("td.name").First().Text()),
					"seats": strings.TrimSpace(s.Find("td.seats").First().Text()),
				})
			})
			out, _ := json.Marshal(map[string]any{"building": "二教", "rooms": rooms})
			if len(out) < 50 {
				b.Fatal(string(out))
			}
		}
	})
}

// memTransport answers every request from memory: the network taken out.
type memTransport struct{ resp proxy.Response }

func (m *memTransport) Do(context.Context, *proxy.Request) (*proxy.Response, error) {
	r := m.resp
	return &r, nil
}

// BenchmarkStepOverhead measures the engine's cost per step without the
// network: tools of 1 and 20 identity steps (jq '.', as, if); a step costs
// (20-steps - 1-steps) / 19. memory-json is the JSON tool above with
// a transport answering from memory.
func BenchmarkStepOverhead(b *testing.B) {
	var sb strings.Builder
	for i := range 20 {
		switch i % 3 {
		case 0:
			sb.WriteString("  - jq: '.'\n")
		case 1:
			sb.WriteString(fmt.Sprintf("  - jq: '.'\n    as: v%d\n", i))
		default:
			sb.WriteString("  - if: 'true'\n    jq: '.'\n")
		}
	}
	p := doc(b, "access:\n  campus: [portal]\n", map[string]string{"steps20": tool(sb.String()), "steps1": tool("  - jq: '.'\n")})
	prog := compile(b, p)
	for _, name := range []string{"steps1", "steps20"} {
		b.Run(strings.TrimPrefix(name, "steps")+"-steps", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := prog.Run(context.Background(), name, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	jp := benchDoc(b)
	jprog := compile(b, jp)
	mt := &memTransport{resp: proxy.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(benchJSON), MediaType: "application/json"}}
	input := map[string]any{"building": "二教"}
	b.Run("memory-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jprog.Run(context.Background(), "rooms", input, interpreter.WithTransport(mt)); err != nil {
				b.Fatal(err)
			}
		}
	})
	q, _ := gojq.Parse(benchProgram)
	code, _ := gojq.Compile(q)
	b.Run("memory-json-handwritten", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(mt.resp.Body, &v); err != nil {
				b.Fatal(err)
			}
			rooms, _ := code.Run(v).Next()
			if _, err := json.Marshal(map[string]any{"building": "二教", "rooms": rooms}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkJQLoop is a jq program of some 100,000 operations (network
// out): what the heap checks of a call's jq programs (one reading of the
// heap every 4096 operations) cost a program that works long.
func BenchmarkJQLoop(b *testing.B) {
	p := doc(b, "", map[string]string{"loop": tool("  - jq: 'reduce range(20000) as $i (0; . + $i)'\n")})
	prog := compile(b, p)
	b.ReportAllocs()
	for b.Loop() {
		res, err := prog.Run(context.Background(), "loop", nil)
		if err != nil || string(res.JSON) != "199990000" {
			b.Fatal(err, string(res.JSON))
		}
	}
}
