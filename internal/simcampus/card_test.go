package simcampus

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

type cardEnv[T any] struct {
	Code    int    `json:"code"`
	Success bool   `json:"success"`
	Msg     string `json:"msg"`
	Message string `json:"message"`
	Data    T      `json:"data"`
}

type cardInfo struct {
	Card []struct {
		Sno        string `json:"sno"`
		Expdate    string `json:"expdate"`
		Lostflag   int    `json:"lostflag"`
		ElecAccamt int64  `json:"elec_accamt"`
		Accinfo    []struct {
			Balance      int64  `json:"balance"`
			Name         string `json:"name"`
			Daycostamt   int64  `json:"daycostamt"`
			Daycostlimit int64  `json:"daycostlimit"`
		} `json:"accinfo"`
	} `json:"card"`
}

type turnoverPage struct {
	Records []struct {
		Resume        string `json:"resume"`
		TurnoverType  string `json:"turnoverType"`
		Tranamt       int64  `json:"tranamt"`
		CardBalance   int64  `json:"cardBalance"`
		EffectdateStr string `json:"effectdateStr"`
		Icon          string `json:"icon"`
	} `json:"records"`
	Total   int `json:"total"`
	Current int `json:"current"`
	Pages   int `json:"pages"`
}

const queryCard = "/berserker-app/ykt/tsm/queryCard?synAccessSource=h5"

func TestCardBalanceAndTodaySpending(t *testing.T) {
	c := start(t, WithClock(fixed(wed))) // 12:30: breakfast and lunch are spent, dinner is not yet
	r := get(t, c, Card, queryCard, true)
	v := decode[cardEnv[cardInfo]](t, r)
	if r.status != 200 || v.Code != 200 || !v.Success || v.Msg != "操作成功" || len(v.Data.Card) != 1 {
		t.Fatalf("status %d %+v", r.status, v)
	}
	card := v.Data.Card[0]
	acc := card.Accinfo[0]
	if acc.Daycostamt != 450+1250 || acc.Daycostlimit != 30000 || card.Expdate != "20280731" {
		t.Errorf("card %+v", card)
	}
	// The balance is the newest record's balance after it.
	today := "timeFrom=2026-04-15&timeTo=2026-04-15"
	p := decode[cardEnv[turnoverPage]](t, get(t, c, Card, "/berserker-search/search/personal/turnover?size=10&current=1&"+today, true))
	if p.Data.Total != 2 || len(p.Data.Records) != 2 {
		t.Fatalf("today's records %+v", p.Data)
	}
	newest := p.Data.Records[0]
	if newest.EffectdateStr != "2026-04-15 12:03:11" || newest.Tranamt != 1250 || newest.Icon != "consume" {
		t.Errorf("newest %+v", newest)
	}
	if acc.Balance != newest.CardBalance || card.ElecAccamt != acc.Balance {
		t.Errorf("balance %d, newest record's %d", acc.Balance, newest.CardBalance)
	}
	if p.Data.Records[1].CardBalance != newest.CardBalance+newest.Tranamt {
		t.Errorf("balances do not chain: %+v", p.Data.Records)
	}
	// Later the same day, dinner is counted.
	c2 := start(t, WithClock(fixed(wed.Add(6*time.Hour))))
	v2 := decode[cardEnv[cardInfo]](t, get(t, c2, Card, queryCard, true))
	if got := v2.Data.Card[0].Accinfo[0].Daycostamt; got != 450+1250+600 {
		t.Errorf("18:30 day cost %d", got)
	}
}

func TestCardTurnoverPagingAndTypes(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	all := decode[cardEnv[turnoverPage]](t, get(t, c, Card, "/berserker-search/search/personal/turnover?size=5&current=1", true))
	if all.Data.Total != 14 || all.Data.Pages != 3 || len(all.Data.Records) != 5 || all.Data.Current != 1 {
		t.Fatalf("page 1 %+v", all.Data)
	}
	last := decode[cardEnv[turnoverPage]](t, get(t, c, Card, "/berserker-search/search/personal/turnover?size=5&current=3", true))
	if len(last.Data.Records) != 4 || last.Data.Records[3].Resume != "燕南食堂" || last.Data.Records[2].Icon != "recharge" {
		t.Errorf("page 3 %+v", last.Data.Records)
	}
	var emptyResume bool
	for _, p := range []int{1, 2, 3} {
		pg := decode[cardEnv[turnoverPage]](t, get(t, c, Card, "/berserker-search/search/personal/turnover?size=5&current="+strconv.Itoa(p), true))
		for _, r := range pg.Data.Records {
			if r.Tranamt < 0 {
				t.Errorf("negative tranamt %+v", r)
			}
			emptyResume = emptyResume || r.Resume == ""
		}
	}
	if !emptyResume {
		t.Error("no record with an empty resume (an awkward case)")
	}
	spend := decode[cardEnv[turnoverPage]](t, get(t, c, Card, "/berserker-search/search/personal/turnover?size=100&current=1&type=2", true))
	for _, r := range spend.Data.Records {
		if r.Icon != "consume" {
			t.Errorf("type=2 has %+v", r)
		}
	}
	if spend.Data.Total != 10 {
		t.Errorf("spending records %d", spend.Data.Total)
	}
}

func TestCardStatistics(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	cnt := decode[cardEnv[map[string]float64]](t, get(t, c, Card, "/berserker-search/statistics/turnover/count?timeFrom=2026-04-14&timeTo=2026-04-15", true))
	if cnt.Data["income"] != 10000 || cnt.Data["expenses"] != 300+450+1250 {
		t.Errorf("count %v", cnt.Data)
	}
	type byType struct {
		TurnoverType string  `json:"turnoverType"`
		Amount       float64 `json:"amount"`
	}
	st := decode[cardEnv[[]byType]](t, get(t, c, Card, "/berserker-search/statistics/turnover?type=2&timeFrom=2026-04-15&timeTo=2026-04-15", true))
	if len(st.Data) != 1 || st.Data[0].TurnoverType != "消费" || st.Data[0].Amount != 1700 {
		t.Errorf("statistics %+v", st.Data)
	}
	sum := decode[cardEnv[map[string]int64]](t, get(t, c, Card, "/berserker-search/statistics/turnover/sum/user?dateStr=2026-04&dateType=month&statisticsDateStr=day&type=2", true))
	if sum.Data["2026-04-15"] != 1700 || sum.Data["2026-04-14"] != 300 {
		t.Errorf("sum/user %v", sum.Data)
	}
	for d := range sum.Data {
		if d[:7] != "2026-04" {
			t.Errorf("day %s outside the month", d)
		}
	}
}

func TestCardExpiry(t *testing.T) {
	c := start(t, WithClock(fixed(wed)))
	const body = `{"code":401,"success":false,"message":"token失效"}`
	check := func(name string, r reply) {
		t.Helper()
		if r.status != http.StatusUnauthorized || string(r.body) != body {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	check("missing", get(t, c, Card, queryCard, false))
	for name, val := range map[string]string{
		"wrong":         "bearer eyJhbGciOiJIUzI1NiJ9.e30.AAAA",
		"no scheme":     c.Secrets()[Card].Headers["synjones-auth"][len("bearer "):],
		"treehole's":    c.Secrets()[Treehole].Headers["Authorization"],
		"padded scheme": "bearer  x" + c.Secrets()[Card].Headers["synjones-auth"][len("bearer "):],
	} {
		req, _ := http.NewRequest("GET", c.Origin(Card)+queryCard, nil)
		req.Header.Set("synjones-auth", val)
		check(name, doReq(t, req))
	}
	// The scheme is case-insensitive, the token is not.
	req, _ := http.NewRequest("GET", c.Origin(Card)+queryCard, nil)
	req.Header.Set("synjones-auth", "Bearer "+c.Secrets()[Card].Headers["synjones-auth"][len("bearer "):])
	if r := doReq(t, req); r.status != 200 {
		t.Errorf("Bearer scheme: %d", r.status)
	}
	c.SetExpired(Card, true)
	check("expired", get(t, c, Card, queryCard, true))
	check("expired turnover", get(t, c, Card, "/berserker-search/search/personal/turnover", true))

	e := start(t, WithExpired(Card))
	check("WithExpired", get(t, e, Card, queryCard, true))
}

func doReq(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}
