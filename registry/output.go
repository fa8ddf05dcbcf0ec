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

// CheckOutput checks v, a result of the tool named tool of document p
// (JSON text or decoded JSON), against the tool's output schema, when it
// declares one: what widgets show from a data source is checked before it
// is shown. nil when the value conforms or there is no schema. The error
// wraps ErrOutputSchema and names the tool's FILE:LINE:COL and the schema's
// keywords that refused the value, never any text of the value: a result
// may carry a third party's text, and a refused one is not shown.
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
	val, err := jsonValue(v)
	if err != nil {
		return fmt.Errorf("the result of %s.%s is not JSON, so it cannot be checked against the output schema at %s: it is not shown", p.ID, tool, mt.Pos)
	}
	err = s.Validate(val)
	if err == nil {
		return nil
	}
	hint := ""
	if m, ok := val.(map[string]any); ok {
		if st, ok := m["status"].(string); ok && statusName.MatchString(st) {
			// A status object (login_required, ...) is a result too.
			hint = fmt.Sprintf(" (it is a status object, status %s: a schema a widget reads must allow the status objects the tool can end with)", st)
		}
	}
	return fmt.Errorf("the result of %s.%s %w (%s), refused by %s: it is not shown%s", p.ID, tool, ErrOutputSchema, mt.Pos, refusedBy(err), hint)
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
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "the schema"
	}
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
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
