package simcampus

import (
	"net/http"
	"sort"
	"time"
)

// cardHandler serves bdcard.pku.edu.cn, the Synjones "berserker" card system
// (campus facts §1a). Every path needs the synjones-auth header; without the
// right one the answer is HTTP 401 {"code":401,"success":false,"message":"token失效"}.
func (c *Campus) cardHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /berserker-app/ykt/tsm/queryCard", c.cardQuery)
	mux.HandleFunc("GET /berserker-search/search/personal/turnover", c.cardTurnover)
	mux.HandleFunc("GET /berserker-search/statistics/turnover/count", c.cardCount)
	mux.HandleFunc("GET /berserker-search/statistics/turnover/sum/user", c.cardSumUser)
	mux.HandleFunc("GET /berserker-search/statistics/turnover", c.cardStatistics)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/berserker-auth/cas/login/pku" {
			c.cardCASLogin(w, r)
			return
		}
		if !c.bearerOK(r, Card, cardHeader) {
			writeRaw(w, http.StatusUnauthorized, []byte(`{"code":401,"success":false,"message":"token失效"}`))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// turnoverRecord is one card transaction as the turnover list shows it.
// Amounts are integer fen; tranamt is never negative, the sign comes from icon.
type turnoverRecord struct {
	Resume        string `json:"resume"`
	TurnoverType  string `json:"turnoverType"`
	Tranamt       int64  `json:"tranamt"`
	CardBalance   int64  `json:"cardBalance"`
	EffectdateStr string `json:"effectdateStr"`
	Icon          string `json:"icon"`

	at time.Time
}

func (t *turnoverRecord) income() bool { return t.Icon != "consume" }

// cardLedger renders the transactions up to now, oldest first, with each
// record's balance after it, and returns them with the balance now.
func (c *Campus) cardLedger() ([]*turnoverRecord, int64, error) {
	now := c.now()
	var f struct {
		OpeningBalance int64             `json:"openingBalance"`
		Records        []*turnoverRecord `json:"records"`
	}
	if err := renderJSON("card/turnover.json.tmpl", now, nil, &f); err != nil {
		return nil, 0, err
	}
	var out []*turnoverRecord
	for _, r := range f.Records {
		t, err := time.ParseInLocation("2006-01-02 15:04:05", r.EffectdateStr, cst)
		if err != nil || t.After(now) {
			continue // not yet happened
		}
		r.at = t
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	bal := f.OpeningBalance
	for _, r := range out {
		if r.income() {
			bal += r.Tranamt
		} else {
			bal -= r.Tranamt
		}
		r.CardBalance = bal
	}
	return out, bal, nil
}

// cardOK writes the Synjones envelope.
func cardOK(w http.ResponseWriter, data any) {
	writeJSON(w, http.StatusOK, map[string]any{"code": 200, "success": true, "msg": "操作成功", "data": data})
}

func (c *Campus) cardQuery(w http.ResponseWriter, r *http.Request) {
	recs, bal, err := c.cardLedger()
	if err != nil {
		fail500(w, err)
		return
	}
	today := day(c.now(), 0)
	var spent int64
	for _, t := range recs {
		if !t.income() && !t.at.Before(today) {
			spent += t.Tranamt
		}
	}
	b, err := render("card/card.json.tmpl", c.now(), map[string]int64{"Balance": bal, "DayCost": spent})
	if err != nil {
		fail500(w, err)
		return
	}
	writeRaw(w, http.StatusOK, b)
}

// inRange keeps the records whose date lies in [timeFrom, timeTo]
// (YYYY-MM-DD, either may be absent).
func inRange(recs []*turnoverRecord, r *http.Request) []*turnoverRecord {
	from, to := param(r, "timeFrom"), param(r, "timeTo")
	var out []*turnoverRecord
	for _, t := range recs {
		d := t.at.Format("2006-01-02")
		if (from == "" || d >= from[:min(len(from), 10)]) && (to == "" || d <= to[:min(len(to), 10)]) {
			out = append(out, t)
		}
	}
	return out
}

// cardTurnover lists transactions newest first: size, current (1-based),
// timeFrom, timeTo; type 1 keeps income and type 2 spending (a guess that
// follows the statistics endpoint, where type=2 is expenses).
func (c *Campus) cardTurnover(w http.ResponseWriter, r *http.Request) {
	recs, _, err := c.cardLedger()
	if err != nil {
		fail500(w, err)
		return
	}
	recs = inRange(recs, r)
	typ := param(r, "type")
	var sel []*turnoverRecord
	for i := len(recs) - 1; i >= 0; i-- {
		t := recs[i]
		if (typ == "1" && !t.income()) || (typ == "2" && t.income()) {
			continue
		}
		sel = append(sel, t)
	}
	size := max(1, intParam(r, "size", 10, 100))
	cur := max(1, intParam(r, "current", 1, 1<<20))
	page := []*turnoverRecord{}
	if s := (cur - 1) * size; s < len(sel) {
		page = sel[s:min(len(sel), s+size)]
	}
	pages := (len(sel) + size - 1) / size
	cardOK(w, map[string]any{"records": page, "total": len(sel), "current": cur, "pages": pages})
}

// cardCount sums income and expenses in fen, as floats. Which unit the real
// service uses is disputed (S1 fen, S6 yuan); the simulation uses fen.
func (c *Campus) cardCount(w http.ResponseWriter, r *http.Request) {
	recs, _, err := c.cardLedger()
	if err != nil {
		fail500(w, err)
		return
	}
	var in, out float64
	for _, t := range inRange(recs, r) {
		if t.income() {
			in += float64(t.Tranamt)
		} else {
			out += float64(t.Tranamt)
		}
	}
	cardOK(w, map[string]float64{"income": in, "expenses": out})
}

// cardStatistics groups spending (type=2) by turnoverType, amounts in fen.
func (c *Campus) cardStatistics(w http.ResponseWriter, r *http.Request) {
	recs, _, err := c.cardLedger()
	if err != nil {
		fail500(w, err)
		return
	}
	wantIncome := param(r, "type") == "1"
	sums := map[string]float64{}
	var order []string
	for _, t := range inRange(recs, r) {
		if t.income() != wantIncome {
			continue
		}
		if _, ok := sums[t.TurnoverType]; !ok {
			order = append(order, t.TurnoverType)
		}
		sums[t.TurnoverType] += float64(t.Tranamt)
	}
	type row struct {
		TurnoverType string  `json:"turnoverType"`
		Amount       float64 `json:"amount"`
	}
	out := []row{}
	for _, k := range order {
		out = append(out, row{k, sums[k]})
	}
	cardOK(w, out)
}

// cardSumUser maps each day of month dateStr (YYYY-MM) with spending to the
// day's spending in fen. Days without spending are left out (a guess).
func (c *Campus) cardSumUser(w http.ResponseWriter, r *http.Request) {
	recs, _, err := c.cardLedger()
	if err != nil {
		fail500(w, err)
		return
	}
	month := param(r, "dateStr")
	if month == "" {
		month = c.now().Format("2006-01")
	}
	wantIncome := param(r, "type") == "1"
	out := map[string]int64{}
	for _, t := range recs {
		if t.income() == wantIncome && t.at.Format("2006-01") == month {
			out[t.at.Format("2006-01-02")] += t.Tranamt
		}
	}
	cardOK(w, out)
}
