package simcampus

import (
	"fmt"
	"net/http"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// deanHandler serves dean.pku.edu.cn's notice pages (campus facts §6, "HTML
// sources"): no login. The pages are an older PHP site, served GBK-encoded
// with Content-Type text/html; charset=gbk (the encoding is the simulation's
// choice, to exercise decoding; the facts do not record it).
func (c *Campus) deanHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /web/notice.php", c.deanList)
	mux.HandleFunc("GET /web/notice_details.php", c.deanDetail)
	return mux
}

type deanNotice struct {
	ID        string `json:"id"`
	Date      string `json:"date"`
	Title     string `json:"title"`
	Published string `json:"published"`
	Body      string `json:"body"`
}

func (c *Campus) deanNotices() ([]deanNotice, error) {
	var ns []deanNotice
	err := renderJSON("dean/notices.json.tmpl", c.now(), nil, &ns)
	return ns, err
}

func (c *Campus) deanList(w http.ResponseWriter, r *http.Request) {
	ns, err := c.deanNotices()
	if err != nil {
		fail500(w, err)
		return
	}
	c.writeGBK(w, "dean/notice.html.tmpl", map[string]any{"Items": ns})
}

func (c *Campus) deanDetail(w http.ResponseWriter, r *http.Request) {
	ns, err := c.deanNotices()
	if err != nil {
		fail500(w, err)
		return
	}
	id := param(r, "id")
	for _, n := range ns {
		if n.ID == id {
			c.writeGBK(w, "dean/notice_details.html.tmpl", n)
			return
		}
	}
	http.NotFound(w, r)
}

// writeGBK renders an HTML template and sends it GBK-encoded.
func (c *Campus) writeGBK(w http.ResponseWriter, name string, data any) {
	b, err := render(name, c.now(), data)
	if err != nil {
		fail500(w, err)
		return
	}
	g, err := simplifiedchinese.GBK.NewEncoder().Bytes(b)
	if err != nil {
		fail500(w, fmt.Errorf("simcampus: fixture %s is not encodable in gbk: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=gbk")
	w.Write(g)
}
