package simcampus

import (
	"encoding/json"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// Every fixture renders for awkward dates: valid JSON, GBK-encodable HTML.
func TestFixturesRenderOnAnyDay(t *testing.T) {
	days := []time.Time{
		wed,
		time.Date(2026, 1, 1, 0, 0, 0, 0, cst),
		time.Date(2026, 2, 28, 23, 59, 0, 0, cst),
		time.Date(2028, 2, 29, 7, 0, 0, 0, cst),
		time.Date(2026, 12, 31, 23, 0, 0, 0, cst),
		time.Date(2030, 9, 1, 8, 0, 0, 0, time.UTC),
	}
	data := map[string]any{
		"card/card.json.tmpl":                map[string]int64{"Balance": 1, "DayCost": 2},
		"dean/notice.html.tmpl":              map[string]any{"Items": []deanNotice{{ID: "1", Date: "2026-01-01", Title: "标题"}}},
		"dean/notice_details.html.tmpl":      deanNotice{ID: "1", Title: "标题", Published: "２０２６年１月１日", Body: "<p>正文</p>"},
		"portal/coursetable_terms.json.tmpl": nil,
	}
	n := 0
	err := fs.WalkDir(fixtureFS, "fixtures", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := strings.TrimPrefix(p, "fixtures/")
		switch {
		case strings.HasSuffix(name, ".json"):
			var v any
			if err := json.Unmarshal(fixture(name), &v); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case strings.HasSuffix(name, ".tmpl"):
			for _, now := range days {
				b, err := render(name, now, data[name])
				if err != nil {
					t.Errorf("%s on %s: %v", name, now, err)
					continue
				}
				if strings.HasSuffix(name, ".json.tmpl") {
					var v any
					if err := json.Unmarshal(b, &v); err != nil {
						t.Errorf("%s on %s: %v", name, now, err)
					}
				} else if _, err := simplifiedchinese.GBK.NewEncoder().Bytes(b); err != nil {
					t.Errorf("%s on %s is not GBK-encodable: %v", name, now, err)
				}
			}
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 15 {
		t.Errorf("only %d fixtures", n)
	}
	// The dean's data renders through its page on every day too.
	for _, now := range days {
		c := &Campus{clock: fixed(now)}
		ns, err := c.deanNotices()
		if err != nil || len(ns) == 0 {
			t.Fatalf("dean notices on %s: %v", now, err)
		}
	}
}

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2025, 9, 1, 0, 0, 0, 0, cst), "25-26-1"},
		{time.Date(2026, 1, 20, 0, 0, 0, 0, cst), "25-26-1"},
		{time.Date(2026, 2, 20, 0, 0, 0, 0, cst), "25-26-2"},
		{time.Date(2026, 7, 10, 0, 0, 0, 0, cst), "25-26-3"},
		{time.Date(2099, 12, 1, 0, 0, 0, 0, cst), "99-00-1"},
		{time.Date(2100, 3, 1, 0, 0, 0, 0, cst), "99-00-2"},
	} {
		if got := termOf(tc.at); got != tc.want {
			t.Errorf("termOf(%s) = %s, want %s", tc.at, got, tc.want)
		}
	}
	if prevTerm("25-26-1") != "24-25-3" || prevTerm("25-26-3") != "25-26-2" || prevTerm("00-01-1") != "99-00-3" {
		t.Error("prevTerm")
	}
	if termName("25-26-2") != "25-26学年2学期" {
		t.Error("termName")
	}
	if fullWidth("第12届 2026") != "第１２届 ２０２６" {
		t.Error("fullWidth")
	}
}

// The campus clock is read per request: today's data follows it, in CST
// whatever zone the clock's times are in.
func TestDataFollowsTheClock(t *testing.T) {
	var now atomic.Int64 // 04:00 on the 15th in Beijing
	now.Store(time.Date(2026, 4, 14, 20, 0, 0, 0, time.UTC).Unix())
	c := start(t, WithClock(func() time.Time { return time.Unix(now.Load(), 0).UTC() }))
	type ev struct {
		Data struct {
			List []map[string]string `json:"list"`
		} `json:"data"`
	}
	v := decode[ev](t, get(t, c, Treehole, "/chapi/api/v3/events/list?startTime=2026-04-15&endTime=2026-04-15", true))
	if len(v.Data.List) != 2 {
		t.Fatalf("events on the 15th (CST): %d", len(v.Data.List))
	}
	// At 04:00 nothing is spent yet today.
	card := decode[cardEnv[cardInfo]](t, get(t, c, Card, queryCard, true))
	if got := card.Data.Card[0].Accinfo[0].Daycostamt; got != 0 {
		t.Errorf("day cost at 04:00: %d", got)
	}
	// A week later the same fixtures describe that week.
	now.Add(7 * 24 * 3600)
	v = decode[ev](t, get(t, c, Treehole, "/chapi/api/v3/events/list?startTime=2026-04-22&endTime=2026-04-22", true))
	if len(v.Data.List) != 2 {
		t.Errorf("events on the 22nd: %d", len(v.Data.List))
	}
	w := listPage(t, c, "hall_id=1")
	if d := w.D.List[0].Table["7"][0].Date; d != "2026-04-20" {
		t.Errorf("this week's Monday %s", d)
	}
}
