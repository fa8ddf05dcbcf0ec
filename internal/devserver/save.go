package devserver

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pkuinfo/harness/plugintest"
	"github.com/pkuinfo/harness/steps"
)

// saveRequest is the body of POST /api/save: a kept run and the test file
// to write it to.
type saveRequest struct {
	Run  string `json:"run"`
	File string `json:"file"` // tests/NAME.yaml
}

// testFileRE is the test file a case may be saved to.
var testFileRE = regexp.MustCompile(`^tests/([A-Za-z0-9][A-Za-z0-9_-]{0,63})\.ya?ml$`)

// serveSave writes a recorded run as a test case (the format harness
// record writes): the exchanges as the steps saw them and the result as
// the expectation, personal values of Config.Scrub replaced, refused when
// any session value of the host is in it; the case is replayed against
// the document as it is now before it is written, and an existing file is
// never replaced.
func (s *Server) serveSave(w http.ResponseWriter, req *http.Request) {
	var sr saveRequest
	if !s.readJSON(w, req, &sr) {
		return
	}
	m := testFileRE.FindStringSubmatch(sr.File)
	if m == nil {
		s.apiError(w, http.StatusBadRequest, "save to tests/NAME.yaml (NAME of letters, digits, - and _), not %q", sr.File)
		return
	}
	if !s.recording() {
		s.apiError(w, http.StatusConflict, "a single-file document keeps its tests as \"yaml test NAME\" blocks: only a folder's runs are saved as tests/NAME.yaml")
		return
	}
	rec := s.keptRun(sr.Run)
	if rec == nil {
		s.apiError(w, http.StatusNotFound, "no run %q (the last %d are kept)", sr.Run, MaxKeptRuns)
		return
	}
	if rec.recording == nil {
		s.apiError(w, http.StatusConflict, "run %s is not kept for saving (it gave no result, or only the last %d results are kept): run the tool again", rec.ID, MaxKeptRecordings)
		return
	}
	sn := s.current()
	if sn.plugin == nil || sn.diags.HasErrors() {
		s.apiError(w, http.StatusConflict, "the document has problems now: fix them, then save (the case is replayed before it is written)")
		return
	}
	text, err := rec.recording.TestFile(plugintest.WriteOptions{Scrub: s.cfg.Scrub})
	if err != nil {
		s.apiError(w, http.StatusUnprocessableEntity, "the run cannot be written as a test case: %v", err)
		return
	}
	release, ok := s.acquire(w)
	if !ok {
		return
	}
	ctx, cancel := s.runContext(req)
	rep := plugintest.Verify(ctx, sn.plugin, m[1], text, plugintest.Options{Host: s.cfg.Host})
	cancel()
	release()
	if !rep.OK() {
		var b bytes.Buffer
		rep.Write(&b, false)
		s.apiError(w, http.StatusUnprocessableEntity, "the recorded case does not pass when replayed, so nothing was written (a result that depends on the time or on the replay's addresses cannot be recorded):\n%s", steps.CleanString(b.String()))
		return
	}
	path := filepath.Join(s.cfg.Path, filepath.FromSlash(sr.File))
	if err := plugintest.WriteCase(path, text, false); err != nil {
		code := http.StatusInternalServerError
		msg := err.Error()
		if strings.Contains(msg, "exists") {
			code, msg = http.StatusConflict, sr.File+" exists: choose another name"
		}
		s.apiError(w, code, "%s", msg)
		return
	}
	s.Check() // the page reloads with the new case
	s.writeJSON(w, http.StatusOK, map[string]any{"file": sr.File, "name": rec.recording.Case.Name,
		"exchanges": len(rec.recording.Case.Exchanges), "note": fmt.Sprintf("replayed and passing; harness test %s runs it", s.cfg.Path)})
}
