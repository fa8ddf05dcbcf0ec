package manifest

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// kindText renders an error kind as the library's English sentence.
func kindText(e *jsonschema.ValidationError) string {
	return e.ErrorKind.LocalizedString(printer)
}

// denyLoader refuses every $ref outside the schema itself: a document's
// schema may not read files or the network.
type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas may not refer to %s: keep them self-contained ($defs)", url)
}

var schemaSeq atomic.Int64

// CompileSchema compiles a JSON Schema (draft 2020-12 unless it says
// otherwise) that may refer only to itself.
func CompileSchema(schema map[string]any) (*jsonschema.Schema, error) {
	return newSchemaCompiler().compile(schema)
}

// schemaCompiler compiles the schemas of one document with one compiler, so
// the meta-schemas are prepared once per document, not once per schema.
type schemaCompiler struct{ c *jsonschema.Compiler }

func newSchemaCompiler() *schemaCompiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(denyLoader{})
	return &schemaCompiler{c: c}
}

func (sc *schemaCompiler) compile(schema map[string]any) (*jsonschema.Schema, error) {
	url := fmt.Sprintf("mem:///schema-%d.json", schemaSeq.Add(1))
	if err := sc.c.AddResource(url, schema); err != nil {
		return nil, err
	}
	return sc.c.Compile(url)
}

// compileSchema compiles and reports problems at the YAML node the schema
// came from, following the error's location inside it when it can.
func (sc *schemaCompiler) compileAt(what string, schema map[string]any, d *yamlx.Doc, n *yaml.Node, pos diag.Pos, l *diag.List) *jsonschema.Schema {
	s, err := sc.compile(schema)
	if err == nil {
		return s
	}
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			leaf := leafError(ve)
			if n != nil {
				pos = d.NodePos(nodeAt(n, leaf.InstanceLocation))
			}
			l.Errorf(pos, "%s is not a valid JSON Schema: at %s: %s", what, pointer(leaf.InstanceLocation), kindText(leaf))
			return nil
		}
	}
	l.Errorf(pos, "%s is not a valid JSON Schema: %s", what, capMessage(err.Error()))
	return nil
}

// maxSchemaMessage bounds a schema library message quoted in a diagnostic:
// some name every "$ref" of a long chain (a 3,000-link chain gave 30 KB).
const maxSchemaMessage = 400

func capMessage(s string) string {
	if r := []rune(s); len(r) > maxSchemaMessage {
		return string(r[:maxSchemaMessage]) + "…"
	}
	return s
}

func leafError(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}

func pointer(loc []string) string {
	if len(loc) == 0 {
		return "the top"
	}
	return "/" + strings.Join(loc, "/")
}

// nodeAt follows a JSON pointer's tokens through YAML nodes as far as it can.
func nodeAt(n *yaml.Node, loc []string) *yaml.Node {
	for _, tok := range loc {
		switch n.Kind {
		case yaml.MappingNode:
			v := yamlx.Lookup(n, tok)
			if v == nil {
				return n
			}
			n = v
		case yaml.SequenceNode:
			var idx int
			if _, err := fmt.Sscan(tok, &idx); err != nil || idx < 0 || idx >= len(n.Content) {
				return n
			}
			n = n.Content[idx]
		default:
			return n
		}
	}
	return n
}

// SchemaLeaves is the failures a validation error is made of: the leaves
// of its tree of causes, in order (nil when err is not a validation error).
func SchemaLeaves(err error) []*jsonschema.ValidationError {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil
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
	return leaves
}

// SchemaMessage turns a validation error into one line naming the fields
// that failed, for a user or the model: "at /building: missing ...".
func SchemaMessage(err error) string {
	leaves := SchemaLeaves(err)
	if leaves == nil {
		return capMessage(err.Error())
	}
	var parts []string
	for i, e := range leaves {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(leaves)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("at %s: %s", pointer(e.InstanceLocation), kindText(e)))
	}
	return capMessage(strings.Join(parts, "; "))
}
