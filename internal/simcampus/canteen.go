package simcampus

import (
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"time"
)

// canteenHandler serves the canteen crowd. SYNTHETIC: no real canteen crowd
// or menu API was found (campus facts §9); the shape is the simulation's own
// and only the canteen names are facts. No login.
//
//	GET /api/crowd[?name=燕南] -> {"updated":"YYYY-MM-DD HH:MM","canteens":[{id,name,open,current,capacity?}]}
//
// current is the number of people inside, following the meal times of the
// campus clock; a canteen whose capacity is unknown has no capacity key.
func (c *Campus) canteenHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/crowd", c.canteenCrowd)
	return mux
}

type canteenDef struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Capacity int      `json:"capacity"`
	Busy     float64  `json:"busy"`
	Hours    []string `json:"hours"`
}

type canteenCrowd struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Open     bool   `json:"open"`
	Current  int    `json:"current"`
	Capacity int    `json:"capacity,omitempty"`
}

func (c *Campus) canteenCrowd(w http.ResponseWriter, r *http.Request) {
	var f struct {
		Canteens []canteenDef `json:"canteens"`
	}
	decodeFixture("canteen/canteens.json", &f)
	now := c.now().Truncate(time.Minute)
	name := param(r, "name")
	out := []canteenCrowd{}
	for _, d := range f.Canteens {
		if name != "" && name != d.Name && name != d.ID {
			continue
		}
		out = append(out, crowdAt(d, now))
	}
	writeJSON(w, http.StatusOK, map[string]any{"updated": now.Format("2006-01-02 15:04"), "canteens": out})
}

// crowdAt models the people inside: zero when closed, else a peak in the
// middle of each opening window, with a small steady jitter per 5 minutes.
func crowdAt(d canteenDef, now time.Time) canteenCrowd {
	cc := canteenCrowd{ID: d.ID, Name: d.Name, Capacity: d.Capacity}
	capacity := d.Capacity
	if capacity == 0 {
		capacity = 300
	}
	mins := now.Hour()*60 + now.Minute()
	for _, h := range d.Hours {
		var h1, m1, h2, m2 int
		if _, err := fmt.Sscanf(h, "%d:%d-%d:%d", &h1, &m1, &h2, &m2); err != nil {
			continue
		}
		from, to := h1*60+m1, h2*60+m2
		if mins < from || mins >= to {
			continue
		}
		cc.Open = true
		mid, half := float64(from+to)/2, float64(to-from)/2
		shape := 1 - math.Abs(float64(mins)-mid)/half // 0 at the edges, 1 at the peak
		hs := fnv.New32a()
		fmt.Fprintf(hs, "%s/%s/%d", d.ID, now.Format("2006-01-02"), mins/5)
		jitter := float64(hs.Sum32()%21) / 100 // 0 .. 0.2
		cc.Current = int(math.Round(float64(capacity) * d.Busy * (0.15 + 0.8*shape) * (0.9 + jitter)))
	}
	return cc
}
