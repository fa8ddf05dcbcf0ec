package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
)

// ErrOutputSchema is wrapped by a result refused because it does not match
// the output schema its tool declares.
var ErrOutputSchema = errors.New("does not match its tool's output schema")

// outputSchemas caches the compiled output schemas of documents' tools:
// a document is immutable, so its tools' schemas compile once.
var outputSchemas sync.Map // *manifest.Tool -> *jsonschema.Schema (nil: none usable)

// outputSchema is mt's compiled output schema; nil when it declares none,
// or one that does not compile (lint says so at its FILE:LINE:COL).
func outputSchema(mt *manifest.Tool) *jsonschema.Schema {
	if mt == nil || mt.Output == nil {
		return nil
	}
	if s, ok := outputSchemas.Load(mt); ok {
		return s.(*jsonschema.Schema)
	}
	s, err := manifest.CompileSchema(mt.Output)
	if err != nil {
		s = nil
	}
	outputSchemas.Store(mt, s)
	return s
}

// OutputError is a result refused by its tool's output schema (or one
// that is not JSON, so it cannot be checked). It names where the tool and
// its schema are and the schema's keywords that refused the value, never
// any text of the value. Every check of a result against its tool's
// output schema goes through CheckOutput: a widget's data source, harness
// dev's widget preview and harness test.
type OutputError struct {
	Plugin, Tool string
	ToolPos      diag.Pos // the tool (its file's start, or its fenced block)
	SchemaPos    diag.Pos // the tool's output: key (ToolPos when not found)
	RefusedBy    string   // "the schema's #/properties/count/type, ..."
	Status       string   // a status object's status ("login_required"), else ""
	NotJSON      bool     // the value is not JSON: nothing was checked
}

// Error says it in the words of a widget's data source: what does not
// match is not shown.
func (e *OutputError) Error() string {
	if e.NotJSON {
		return fmt.Sprintf("the result of %s.%s is not JSON, so it cannot be checked against the output schema at %s: it is not shown", e.Plugin, e.Tool, e.ToolPos)
	}
	hint := ""
	if e.Status != "" {
		hint = fmt.Sprintf(" (it is a status object, status %s: a schema a widget reads must allow the status objects the tool can end with)", e.Status)
	}
	return fmt.Sprintf("the result of %s.%s %v (%s), refused by %s: it is not shown%s", e.Plugin, e.Tool, ErrOutputSchema, e.ToolPos, e.RefusedBy, hint)
}

// Unwrap is ErrOutputSchema for a value the schema refused.
func (e *OutputError) Unwrap() error {
	if e.NotJSON {
		return nil
	}
	return ErrOutputSchema
}

// CheckOutput checks v, a result of the tool named tool of document p
// (JSON text or decoded JSON), against the tool's output schema, when it
// declares one: what widgets show from a data source is checked before it
// is shown, and harness test checks every result a case yields. nil when
// the value conforms or there is no schema; else an *OutputError, which
// wraps ErrOutputSchema and names the tool's FILE:LINE:COL and the
// schema's keywords that refused the value, never any text of the value:
// a result may carry a third party's text, and a refused one is not
// shown. A status object ({"status": "login_required", ...}) is a result
// too: the schema must allow the status objects the tool can end with.
func CheckOutput(p *manifest.Plugin, tool string, v any) error {
	if p == nil {
		return nil
	}
	var mt *manifest.Tool
	for _, t := range p.Tools {
		if t.Name == tool {
			mt = t
		}
	}
	s := outputSchema(mt)
	if s == nil {
		return nil
	}
	e := &OutputError{Plugin: p.ID, Tool: tool, ToolPos: mt.Pos, SchemaPos: mt.Pos}
	if mt.Doc != nil {
		if n := yamlx.Lookup(mt.Doc.Root, "output"); n != nil {
			e.SchemaPos = mt.Doc.NodePos(n)
		}
	}
	val, err := jsonValue(v)
	if err != nil {
		e.NotJSON = true
		return e
	}
	err = s.Validate(val)
	if err == nil {
		return nil
	}
	e.RefusedBy = refusedBy(err)
	if m, ok := val.(map[string]any); ok {
		if st, ok := m["status"].(string); ok && statusName.MatchString(st) {
			e.Status = st // a status object (login_required, ...) is a result too
		}
	}
	return e
}

// jsonValue is v as the schema validator reads JSON: text is decoded with
// its numbers kept exact; a decoded value is passed through JSON again so
// that any Go value reads as JSON would.
func jsonValue(v any) (any, error) {
	var b []byte
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// statusName is a status object's status as the format writes it.
var statusName = regexp.MustCompile(`^[a-z][a-z_]{0,39}$`)

// refusedBy names the schema keywords that refused a value: their places
// in the schema ("#/properties/people/type"), at most three, from the
// author's schema only.
func refusedBy(err error) string {
	leaves := manifest.SchemaLeaves(err)
	if leaves == nil {
		return "the schema"
	}
	var parts []string
	seen := map[string]bool{}
	for _, e := range leaves {
		at := "#"
		if _, frag, ok := strings.Cut(e.SchemaURL, "#"); ok {
			at += frag
		}
		if e.ErrorKind != nil {
			for _, k := range e.ErrorKind.KeywordPath() {
				at += "/" + k
			}
		}
		if seen[at] {
			continue
		}
		seen[at] = true
		if len(parts) == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, at)
	}
	if len(parts) == 0 {
		return "the schema"
	}
	return "the schema's " + strings.Join(parts, ", ")
}
