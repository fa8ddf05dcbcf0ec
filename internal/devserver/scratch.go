package devserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/steps"
	"go.yaml.in/yaml/v3"
)

// scratchRequest is the body of POST /api/scratch: a jq program run on a
// JSON text, or a CSS selector (with an optional attribute) run on an HTML
// text.
type scratchRequest struct {
	Kind     string `json:"kind"` // jq | css
	Program  string `json:"program"`
	Selector string `json:"selector"`
	Attr     string `json:"attr"`
	Input    string `json:"input"`
}

type scratchAnswer struct {
	OK     bool   `json:"ok"`
	Result string `json:"result,omitempty"` // JSON text
	Error  string `json:"error,omitempty"`
}

// maxScratchProgram bounds a program or selector typed in the pane.
const maxScratchProgram = 16 << 10

func (s *Server) serveScratch(w http.ResponseWriter, req *http.Request) {
	var sr scratchRequest
	if !s.readJSON(w, req, &sr) {
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), maxScratchDuration)
	defer cancel()
	v, err := Scratch(ctx, sr)
	if err != nil {
		s.writeJSON(w, http.StatusOK, scratchAnswer{Error: steps.CleanString(err.Error())})
		return
	}
	b, err := steps.Encode(v, 64)
	if err != nil {
		s.writeJSON(w, http.StatusOK, scratchAnswer{Error: err.Error()})
		return
	}
	s.writeJSON(w, http.StatusOK, scratchAnswer{OK: true, Result: string(b)})
}

// Scratch compiles the pane's expression as one step of a tool (a jq step,
// or an html step and a jq step that lists the attribute), with the
// engine's own step compiler, so the hardening, the limits and the
// messages are a tool's, and runs it on the input.
func Scratch(ctx context.Context, sr scratchRequest) (any, error) {
	var stepList []map[string]any
	var dot any
	switch sr.Kind {
	case "jq":
		if strings.TrimSpace(sr.Program) == "" {
			return nil, errors.New("type a jq program")
		}
		if len(sr.Program) > maxScratchProgram {
			return nil, fmt.Errorf("the program is longer than %d bytes", maxScratchProgram)
		}
		stepList = []map[string]any{{"jq": sr.Program}}
		if strings.TrimSpace(sr.Input) == "" {
			dot = nil
		} else {
			v, err := steps.DecodeJSON([]byte(sr.Input), 64)
			if err != nil {
				return nil, fmt.Errorf("the input is not JSON: %v", err)
			}
			dot = v
		}
	case "css":
		if strings.TrimSpace(sr.Selector) == "" {
			return nil, errors.New("type a CSS selector")
		}
		if len(sr.Selector) > maxScratchProgram || len(sr.Attr) > 256 {
			return nil, fmt.Errorf("the selector is longer than %d bytes", maxScratchProgram)
		}
		h := map[string]any{"from": ".", "select": sr.Selector}
		if sr.Attr != "" {
			h["fields"] = map[string]any{"value": map[string]any{"attr": sr.Attr}}
			stepList = []map[string]any{{"html": h}, {"jq": "[.[].value]"}}
		} else {
			stepList = []map[string]any{{"html": h}}
		}
		dot = sr.Input
	default:
		return nil, fmt.Errorf("kind must be jq or css, not %q", sr.Kind)
	}
	src, err := yaml.Marshal(stepList)
	if err != nil {
		return nil, err
	}
	var l diag.List
	doc := yamlx.Parse("scratch", src, 1, nil, yamlx.Limits{MaxBytes: 4 * maxScratchProgram, MaxKeys: 100, MaxDepth: 8}, &l)
	if l.HasErrors() || doc.Root == nil {
		return nil, scratchProblems(l)
	}
	lim := steps.DefaultLimits()
	c := &steps.Compiler{Doc: doc, L: &l, Scope: steps.NewScope(), Limits: &lim, Registry: steps.Builtin()}
	block := c.Block(doc.Root, "steps")
	if l.HasErrors() {
		return nil, scratchProblems(l)
	}
	f := &steps.Frame{Dot: dot, Vars: make([]any, c.Scope.Slots()), Limits: &lim}
	if err := block.Run(ctx, f); err != nil {
		var se *steps.StepError
		if errors.As(err, &se) {
			return nil, se.Err
		}
		return nil, err
	}
	return f.Dot, nil
}

// scratchProblems gives the compile problems without the generated text's
// positions, which mean nothing to the author.
func scratchProblems(l diag.List) error {
	var msgs []string
	for _, d := range l.Items {
		if d.Severity == diag.Error {
			msgs = append(msgs, d.Msg)
		}
	}
	if len(msgs) == 0 {
		return errors.New("the expression does not compile")
	}
	return errors.New(strings.Join(msgs, "; "))
}
