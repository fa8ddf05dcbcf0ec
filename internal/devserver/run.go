package devserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/steps"
)

// traceStep is one step of a run as the page shows it. Every text in it
// passed the run's redactor.
type traceStep struct {
	Label   string  `json:"label"`
	Kind    string  `json:"kind"`
	Pos     string  `json:"pos"`
	Ms      float64 `json:"ms"`
	Skipped bool    `json:"skipped,omitempty"`
	Error   string  `json:"error,omitempty"`
	Output  string  `json:"output,omitempty"` // the step's output as JSON text
	Cut     bool    `json:"cut,omitempty"`    // Output was cut at MaxTraceOutput
	Method  string  `json:"method,omitempty"` // a request step: the request
	URL     string  `json:"url,omitempty"`
	Status  int     `json:"status,omitempty"` // and its answer
	Headers string  `json:"headers,omitempty"`
	Body    string  `json:"body,omitempty"` // the answer's body as text (JSON re-encoded)
}

// runRecord is one finished run.
type runRecord struct {
	ID       string          `json:"id"`
	Tool     string          `json:"tool"`
	Input    map[string]any  `json:"input"`
	At       time.Time       `json:"-"`
	Ms       float64         `json:"ms"`
	Result   json.RawMessage `json:"result,omitempty"`
	Status   string          `json:"status,omitempty"`
	Error    string          `json:"error,omitempty"`
	Refused  string          `json:"refused,omitempty"`
	Trace    []traceStep     `json:"trace"`
	Truncate bool            `json:"truncated,omitempty"`
}

func (r *runRecord) label() string {
	in, _ := json.Marshal(r.Input)
	s := fmt.Sprintf("%s %s %s", r.At.Format(time.TimeOnly), r.Tool, in)
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// runRequest is the body of POST /api/run.
type runRequest struct {
	Tool    string          `json:"tool"`
	Input   json.RawMessage `json:"input"`
	Approve bool            `json:"approve"`
}

// decodeInput reads a tool's input as the engine reads --input.
func decodeInput(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	v, err := steps.DecodeJSON(raw, 64)
	if err != nil {
		return nil, fmt.Errorf("the input is not JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the input must be a JSON object")
	}
	return m, nil
}

func (s *Server) serveRun(w http.ResponseWriter, req *http.Request) {
	var rr runRequest
	if !s.readJSON(w, req, &rr) {
		return
	}
	input, err := decodeInput(rr.Input)
	if err != nil {
		s.apiError(w, http.StatusBadRequest, "%v", err)
		return
	}
	release, ok := s.acquire(w)
	if !ok {
		return
	}
	defer release()
	ctx, cancel := s.runContext(req)
	defer cancel()
	rec, code := s.run(ctx, rr.Tool, input, rr.Approve)
	if code != http.StatusOK {
		s.apiError(w, code, "%s", rec.Error)
		return
	}
	s.writeJSON(w, http.StatusOK, rec)
}

// run runs one tool of the current document as the user, through the
// host, recording its trace. The code is 200 for a run that happened
// (failed, refused or not) and 4xx for a call that could not start.
func (s *Server) run(ctx context.Context, tool string, input map[string]any, approve bool) (*runRecord, int) {
	sn := s.current()
	rec := &runRecord{Tool: tool, Input: input, At: time.Now(), Trace: []traceStep{}}
	if sn.plugin == nil || sn.doc == nil {
		rec.Error = "the document does not parse: see its problems"
		return rec, http.StatusConflict
	}
	if sn.plugin.Tool(tool) == nil {
		rec.Error = fmt.Sprintf("the document has no tool %q", tool)
		return rec, http.StatusNotFound
	}
	if _, ok := sn.doc.Program().Limits(tool); !ok {
		rec.Error = fmt.Sprintf("tool %q does not compile: see its problems", tool)
		return rec, http.StatusConflict
	}
	if input == nil {
		input = map[string]any{}
	}
	d := registry.CheckRun(ctx, registry.RunCheck{Plugin: sn.plugin, Trust: s.cfg.Trust, Tool: tool,
		Actor: registry.User, Approve: approve, Input: input})
	if !d.Allow {
		if d.ExitCode() == 2 {
			rec.Error = d.Message
		} else {
			rec.Refused = strings.TrimSuffix(d.Message, "; pass --approve")
			if d.Reason == registry.ReasonNoApprover {
				rec.Refused += "; tick approve to answer yes"
			}
		}
		s.keep(rec)
		return rec, http.StatusOK
	}
	var mu sync.Mutex
	call := host.Call{Tool: tool, Input: d.Input, Checked: true, Trust: s.cfg.Trust,
		Events: func(e steps.Event, redact func(string) string) {
			st := viewEvent(e, redact)
			mu.Lock()
			rec.Trace = append(rec.Trace, st)
			mu.Unlock()
		}}
	start := time.Now()
	res, err := sn.doc.Run(ctx, call)
	rec.Ms = msSince(start)
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		rec.Error = steps.CleanString(err.Error()) // redacted by the host
	} else {
		rec.Result = json.RawMessage(res.JSON)
		rec.Status = res.Status
		rec.Truncate = res.Truncated
	}
	s.keep(rec)
	return rec, http.StatusOK
}

// keep numbers a finished run and keeps it, with the last MaxKeptRuns.
func (s *Server) keep(rec *runRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	rec.ID = strconv.Itoa(s.seq)
	s.kept = append(s.kept, rec)
	if len(s.kept) > MaxKeptRuns {
		s.kept = append([]*runRecord(nil), s.kept[len(s.kept)-MaxKeptRuns:]...)
	}
}

// kept returns a kept run by its id.
func (s *Server) keptRun(id string) *runRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.kept {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func msSince(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}

// viewEvent turns a step's event into what the page shows, every text
// cleaned and then redacted (a cut could split a secret, so the cut comes
// after the redaction).
func viewEvent(e steps.Event, redact func(string) string) traceStep {
	safe := func(s string) string {
		s = steps.CleanString(s)
		if redact != nil {
			s = redact(s)
		}
		return s
	}
	st := traceStep{Label: e.Label, Kind: e.Kind, Pos: e.Pos.String(), Ms: float64(e.Duration.Microseconds()) / 1000, Skipped: e.Skipped}
	if e.Err != nil {
		st.Error = safe(e.Err.Error())
		return st
	}
	if e.Skipped {
		return st
	}
	if steps.JSONOver(e.Output, 64, 4*MaxTraceOutput) {
		st.Output, st.Cut = "(an output of more than "+strconv.Itoa(4*MaxTraceOutput>>10)+" KiB as JSON)", true
	} else if b, err := steps.Encode(e.Output, 64); err != nil {
		st.Output = "(" + err.Error() + ")"
	} else {
		st.Output = safe(string(b))
	}
	if e.Kind == "request" {
		if m, ok := e.Output.(map[string]any); ok {
			if u, ok := m["url"].(string); ok {
				st.URL = safe(u)
			}
			switch v := m["status"].(type) {
			case int:
				st.Status = v
			case float64:
				st.Status = int(v)
			case json.Number:
				n, _ := v.Int64()
				st.Status = int(n)
			}
			if h, ok := m["headers"]; ok {
				if b, err := steps.Encode(h, 16); err == nil {
					st.Headers = safe(string(b))
				}
			}
			switch b := m["body"].(type) {
			case string:
				st.Body = safe(b)
			case nil:
			default:
				if enc, err := steps.Encode(b, 64); err == nil {
					st.Body = safe(string(enc))
				}
			}
		}
	}
	st.Output, st.Cut = cut(st.Output, st.Cut)
	st.Body, _ = cut(st.Body, false)
	return st
}

// cut shortens s to MaxTraceOutput bytes at a rune boundary.
func cut(s string, already bool) (string, bool) {
	if len(s) <= MaxTraceOutput {
		return s, already
	}
	i := MaxTraceOutput
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…", true
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
