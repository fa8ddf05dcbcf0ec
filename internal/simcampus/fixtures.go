package simcampus

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"text/template"
	"time"
)

// fixtureFS holds the fixtures: plain files are served or decoded as they
// are; *.tmpl files are text/template rendered against the campus clock.
//
//go:embed fixtures
var fixtureFS embed.FS

// fixture returns a plain fixture file.
func fixture(name string) []byte {
	b, err := fixtureFS.ReadFile("fixtures/" + name)
	if err != nil {
		panic("simcampus: missing fixture " + name) // embedded: a build-time fact
	}
	return b
}

// render executes the template fixture name with the clock functions for now
// and the given data (available as . in the template).
func render(name string, now time.Time, data any) ([]byte, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(clockFuncs(now)).Parse(string(fixture(name)))
	if err != nil {
		return nil, fmt.Errorf("simcampus: fixture %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("simcampus: fixture %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// renderJSON renders a template fixture and decodes it into v.
func renderJSON(name string, now time.Time, data, v any) error {
	b, err := render(name, now, data)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("simcampus: fixture %s is not valid json: %w", name, err)
	}
	return nil
}

// decodeFixture decodes a plain JSON fixture into v.
func decodeFixture(name string, v any) {
	if err := json.Unmarshal(fixture(name), v); err != nil {
		panic("simcampus: fixture " + name + " is not valid json: " + err.Error())
	}
}

// day returns midnight (CST) of now's date plus n days.
func day(now time.Time, n int) time.Time {
	y, m, d := now.In(cst).Date()
	return time.Date(y, m, d+n, 0, 0, 0, 0, cst)
}

// at returns the time hh:mm[:ss] on day n.
func at(now time.Time, n int, clock string) time.Time {
	var h, m, s int
	if _, err := fmt.Sscanf(clock, "%d:%d:%d", &h, &m, &s); err != nil {
		s = 0
		if _, err := fmt.Sscanf(clock, "%d:%d", &h, &m); err != nil {
			panic("simcampus: bad clock " + clock + " in a fixture")
		}
	}
	d := day(now, n)
	return time.Date(d.Year(), d.Month(), d.Day(), h, m, s, 0, cst)
}

// termOf returns the academic term of t as "yy-yy-n": autumn (Sep-Jan) is 1,
// spring (Feb-Jun) is 2, summer (Jul-Aug) is 3.
func termOf(t time.Time) string {
	y := t.Year() % 100
	switch m := t.Month(); {
	case m >= time.September:
		return fmt.Sprintf("%02d-%02d-1", y, (y+1)%100)
	case m == time.January:
		return fmt.Sprintf("%02d-%02d-1", (y+99)%100, y)
	case m <= time.June:
		return fmt.Sprintf("%02d-%02d-2", (y+99)%100, y)
	default:
		return fmt.Sprintf("%02d-%02d-3", (y+99)%100, y)
	}
}

// prevTerm returns the term before term ("25-26-1" -> "24-25-3").
func prevTerm(term string) string {
	var a, b, n int
	fmt.Sscanf(term, "%d-%d-%d", &a, &b, &n)
	if n > 1 {
		return fmt.Sprintf("%02d-%02d-%d", a, b, n-1)
	}
	return fmt.Sprintf("%02d-%02d-3", (a+99)%100, a)
}

// termName spells a term as the portal does: "25-26学年2学期".
func termName(term string) string {
	i := strings.LastIndexByte(term, '-')
	return term[:i] + "学年" + term[i+1:] + "学期"
}

// fullWidth turns ASCII digits into full-width ones (２０２６).
func fullWidth(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			r = r - '0' + '０'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// clockFuncs are the template functions of date-dependent fixtures.
func clockFuncs(now time.Time) template.FuncMap {
	return template.FuncMap{
		// date N: YYYY-MM-DD of today+N.
		"date": func(n int) string { return day(now, n).Format("2006-01-02") },
		// at N "HH:MM[:SS]": "YYYY-MM-DD HH:MM:SS".
		"at": func(n int, clock string) string { return at(now, n, clock).Format("2006-01-02 15:04:05") },
		// compact N: YYYYMMDD.
		"compact": func(n int) string { return day(now, n).Format("20060102") },
		// unix N "HH:MM": Unix seconds.
		"unix": func(n int, clock string) int64 { return at(now, n, clock).Unix() },
		// rfc2822 N "HH:MM": the local wall clock labelled GMT, as Flask's
		// jsonify prints a naive datetime.
		"rfc2822": func(n int, clock string) string {
			return at(now, n, clock).Format("Mon, 02 Jan 2006 15:04:05") + " GMT"
		},
		// cndate N: "2026年4月1日".
		"cndate": func(n int) string {
			d := day(now, n)
			return fmt.Sprintf("%d年%d月%d日", d.Year(), int(d.Month()), d.Day())
		},
		// fw S: full-width digits.
		"fw":   fullWidth,
		"term": func() string { return termOf(now) },
		"prevTerm": func(k int) string {
			t := termOf(now)
			for ; k > 0; k-- {
				t = prevTerm(t)
			}
			return t
		},
		"termName": termName,
	}
}

// writeJSON writes v as JSON with the Content-Type Java and PHP campus
// servers send. HTML characters are not escaped (the servers do not).
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	w.Write(bytes.TrimRight(buf.Bytes(), "\n"))
}

// writeRaw writes a JSON body as it is, without the fixture file's final
// newline.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	w.Write(bytes.TrimRight(body, "\n"))
}

// fail500 reports a broken fixture.
func fail500(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// param reads a form or query value (POST forms first, as servlet
// getParameter does); a body that is too big or malformed reads as empty.
func param(r *http.Request, name string) string {
	if r.Form == nil {
		if err := r.ParseForm(); err != nil {
			return ""
		}
	}
	return r.Form.Get(name)
}

// intParam parses a non-negative integer parameter, def when absent or bad,
// capped at max.
func intParam(r *http.Request, name string, def, max int) int {
	s := param(r, name)
	if s == "" {
		return def
	}
	n := 0
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return def
		}
		n = n*10 + int(ch-'0')
		if n > max {
			return max
		}
	}
	return n
}
