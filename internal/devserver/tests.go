package devserver

import (
	"bytes"
	"net/http"

	"github.com/pkuinfo/harness/plugintest"
	"github.com/pkuinfo/harness/steps"
)

type caseView struct {
	File     string   `json:"file"`
	Name     string   `json:"name"`
	Pos      string   `json:"pos"`
	Tool     string   `json:"tool"`
	Passed   bool     `json:"passed"`
	Failures []string `json:"failures"`
	Ms       float64  `json:"ms"`
}

type testsAnswer struct {
	OK    bool       `json:"ok"`
	Cases []caseView `json:"cases"`
	Text  string     `json:"text"` // the report as `harness test -v` prints it
}

// serveTests runs the document's own test cases against their recorded
// exchanges, as `harness test` does: nothing leaves this machine.
func (s *Server) serveTests(w http.ResponseWriter, req *http.Request) {
	var body struct{}
	if !s.readJSON(w, req, &body) {
		return
	}
	sn := s.current()
	if sn.plugin == nil {
		s.apiError(w, http.StatusConflict, "the document does not parse: see its problems")
		return
	}
	release, ok := s.acquire(w)
	if !ok {
		return
	}
	defer release()
	ctx, cancel := s.runContext(req)
	defer cancel()
	rep := plugintest.Run(ctx, sn.plugin, plugintest.Options{Host: s.cfg.Host})
	ans := testsAnswer{OK: rep.OK(), Cases: []caseView{}}
	for _, c := range rep.Cases {
		cv := caseView{File: c.File, Name: c.Name, Pos: c.Pos.String(), Tool: c.Tool, Passed: c.Passed(),
			Failures: []string{}, Ms: float64(c.Duration.Microseconds()) / 1000}
		for _, f := range c.Failures {
			cv.Failures = append(cv.Failures, steps.CleanString(f))
		}
		ans.Cases = append(ans.Cases, cv)
	}
	var b bytes.Buffer
	rep.Write(&b, true)
	ans.Text = b.String()
	s.writeJSON(w, http.StatusOK, ans)
}
