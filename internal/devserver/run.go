package devserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/pkuinfo/harness/registry"
	"github.com/pkuinfo/harness/steps"
)

// traceStep is one step of a run as the page shows it, with the
// requests it sent. Every text in it passed the run's redactor (the
// engine's JSON trace, interpreter.TraceJSON, redacts each value).
type traceStep struct {
	Label    string          `json:"label"`
	Kind     string          `json:"kind"`
	Pos      string          `json:"pos"`
	Ms       float64         `json:"ms"`
	Skipped  bool            `json:"skipped,omitempty"`
	Error    string          `json:"error,omitempty"`
	Output   json.RawMessage `json:"output,omitempty"`  // the step's output
	Omitted  string          `json:"omitted,omitempty"` // why the output is not shown
	Requests []traceRequest  `json:"requests,omitempty"`
}

// traceRequest is one request a step sent and its answer.
type traceRequest struct {
	Method      string            `json:"method"`
	Service     string            `json:"service,omitempty"`
	Target      string            `json:"target"` // the path (campus) or URL (web), with the query as sent
	Headers     map[string]string `json:"headers,omitempty"`
	Body        string            `json:"body,omitempty"`
	ContentType string            `json:"contentType,omitempty"`
	Ms          float64           `json:"ms"`
	Error       string            `json:"error,omitempty"`
	Status      int               `json:"status,omitempty"`
	URL         string            `json:"url,omitempty"` // the final URL
	RespHeaders map[string]string `json:"respHeaders,omitempty"`
	MediaType   string            `json:"mediaType,omitempty"`
	RespBody    string            `json:"respBody,omitempty"`
	Binary      bool              `json:"binary,omitempty"`
	Bytes       int               `json:"bytes,omitempty"`
	Cut         bool              `json:"cut,omitempty"`
}

// traceEvent is one object of the engine's JSON trace.
type traceEvent struct {
	Event         string            `json:"event"`
	Pos           string            `json:"pos"`
	Step          string            `json:"step"`
	Kind          string            `json:"kind"`
	DurationMs    float64           `json:"durationMs"`
	Error         string            `json:"error"`
	Skipped       bool              `json:"skipped"`
	Output        json.RawMessage   `json:"output"`
	OutputOmitted string            `json:"outputOmitted"`
	Method        string            `json:"method"`
	Service       string            `json:"service"`
	Path          string            `json:"path"`
	URL           string            `json:"url"`
	Headers       map[string]string `json:"headers"`
	Body          string            `json:"body"`
	ContentType   string            `json:"contentType"`
	Response      *struct {
		Status    int               `json:"status"`
		URL       string            `json:"url"`
		Headers   map[string]string `json:"headers"`
		MediaType string            `json:"mediaType"`
		Bytes     int               `json:"bytes"`
		Binary    bool              `json:"binary"`
		Body      string            `json:"body"`
		BodyCut   bool              `json:"bodyCut"`
	} `json:"response"`
}

// traceSink collects a run's JSON trace, one object per Write (as the
// engine's tracer writes them), up to maxTraceBytes in all.
type traceSink struct {
	mu      sync.Mutex
	steps   []traceStep
	pending []traceRequest // requests of the step that is still running
	size    int
	cut     bool
}

// maxTraceBytes bounds what one run's trace keeps.
const maxTraceBytes = 8 << 20

func (t *traceSink) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.size += len(b); t.size > maxTraceBytes {
		t.cut = true
		return len(b), nil
	}
	var e traceEvent
	if err := json.Unmarshal(b, &e); err != nil {
		return len(b), nil // not an event: nothing to show
	}
	switch e.Event {
	case "request":
		r := traceRequest{Method: e.Method, Service: e.Service, Target: e.Path, Headers: e.Headers, Body: e.Body,
			ContentType: e.ContentType, Ms: e.DurationMs, Error: e.Error}
		if e.Service == "" {
			r.Target = e.URL
		}
		if x := e.Response; x != nil {
			r.Status, r.URL, r.RespHeaders, r.MediaType, r.Bytes, r.Binary, r.RespBody, r.Cut =
				x.Status, x.URL, x.Headers, x.MediaType, x.Bytes, x.Binary, x.Body, x.BodyCut
		}
		t.pending = append(t.pending, r)
	case "step":
		t.steps = append(t.steps, traceStep{Label: e.Step, Kind: e.Kind, Pos: e.Pos, Ms: e.DurationMs, Skipped: e.Skipped,
			Error: e.Error, Output: e.Output, Omitted: e.OutputOmitted, Requests: t.pending})
		t.pending = nil
	}
	return len(b), nil
}

// done returns the steps, with requests no step claimed (a run that ended
// inside a step) as a last entry.
func (t *traceSink) done() ([]traceStep, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.steps
	if len(t.pending) > 0 {
		out = append(out, traceStep{Label: "?", Kind: "request", Requests: t.pending})
	}
	if out == nil {
		out = []traceStep{}
	}
	return out, t.cut
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
	TraceCut bool            `json:"traceCut,omitempty"`
	Saveable bool            `json:"saveable"`
	Note     string          `json:"note,omitempty"`

	recording *plugintest.Recording // the run's exchanges, for "save as test case"
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
	sink := &traceSink{}
	call := host.Call{Tool: tool, Input: d.Input, Checked: true, Trust: s.cfg.Trust,
		Trace: sink, TraceMode: interpreter.TraceJSON}
	start := time.Now()
	if !s.recording() {
		res, err := sn.doc.Run(ctx, call)
		rec.Ms = msSince(start)
		rec.Trace, rec.TraceCut = sink.done()
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
	// A folder's runs are recorded (as harness record does), so that a
	// run can be saved as a test case.
	opts := plugintest.RecordOptions{Trust: string(s.cfg.Trust)}
	if approve && d.Ask {
		yes := true
		opts.Approve = &yes
	}
	r, err := plugintest.Record(ctx, sn.doc, call, opts)
	rec.Ms = msSince(start)
	rec.Trace, rec.TraceCut = sink.done()
	switch {
	case err != nil:
		rec.Error = "the run cannot be recorded: " + steps.CleanString(err.Error())
	case r.Err != nil:
		rec.Error = steps.CleanString(r.Err.Error()) // redacted by the host
	default:
		rec.Result = json.RawMessage(r.Result)
		rec.Status = resultStatus(r.Result)
		rec.recording, rec.Saveable = r, true
	}
	s.keep(rec)
	return rec, http.StatusOK
}

// recording reports whether runs are recorded: the document is a folder,
// whose tests/ a case can be saved into.
func (s *Server) recording() bool {
	st, err := os.Stat(s.cfg.Path)
	return err == nil && st.IsDir()
}

// resultStatus is the status field of a status result ("login_required").
func resultStatus(b []byte) string {
	var v struct {
		Status string `json:"status"`
	}
	if len(b) > 0 && b[0] == '{' && json.Unmarshal(b, &v) == nil {
		return v.Status
	}
	return ""
}

// keep numbers a finished run and keeps it, with the last MaxKeptRuns.
func (s *Server) keep(rec *runRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	rec.ID = strconv.Itoa(s.seq)
	if rec.recording != nil && recordingBytes(rec.recording) > MaxRecordingBytes {
		rec.recording, rec.Saveable = nil, false
		rec.Note = fmt.Sprintf("its exchanges hold more than %d MiB: it is not kept for saving", MaxRecordingBytes>>20)
	}
	s.kept = append(s.kept, rec)
	if len(s.kept) > MaxKeptRuns {
		s.kept = append([]*runRecord(nil), s.kept[len(s.kept)-MaxKeptRuns:]...)
	}
	n := 0
	for i := len(s.kept) - 1; i >= 0; i-- {
		if s.kept[i].recording == nil {
			continue
		}
		if n++; n > MaxKeptRecordings {
			s.kept[i].recording = nil // an older run's exchanges are let go
		}
	}
}

// recordingBytes is what a recording's exchanges hold.
func recordingBytes(r *plugintest.Recording) int {
	n := len(r.Result)
	for _, e := range r.Case.Exchanges {
		n += len(e.Resp.Body) + len(e.Path)
	}
	return n
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
