package steps

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pkuinfo/harness/manifest"
)

// JSONSchema returns the JSON Schema definitions of a step, generated from
// the specs in r, as the `$defs` object of a schema document (draft
// 2020-12): "step" is one step (a oneOf of one object per kind, each with
// its kind key required and the modifiers as and if), "steps" a list of
// steps, "as" and "if" the modifiers, and "kind.NAME" the value under kind
// NAME's key. References point into the document's own $defs
// ("#/$defs/step"), so the result goes there unchanged;
// docs/schema/tool.schema.json holds it, and a test keeps it up to date.
//
// It fails when a spec names a field type, or a scalar form, that has no
// JSON Schema here: add it to fieldTypes or shortForms.
func JSONSchema(r *Registry) (map[string]any, error) {
	kinds := r.Kinds()
	defs := map[string]any{
		"as": map[string]any{
			"description": "Binds the step's output to $NAME for every later step.",
			"type":        "string",
			"pattern":     nameRE.String(),
			"not":         map[string]any{"enum": reserved()},
		},
		"if": map[string]any{
			"description": "A jq condition: the step runs only when its first result is neither false nor null.",
			"type":        []any{"string", "boolean"},
		},
		"steps": map[string]any{
			"type":     "array",
			"minItems": 1,
			"maxItems": manifest.MaxSteps,
			"items":    ref("step"),
		},
	}
	var oneOf []any
	var problems []string
	for _, k := range kinds {
		s, _ := r.Spec(k)
		v, err := kindValue(r, s)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		defs["kind."+k] = v
		oneOf = append(oneOf, map[string]any{
			"type":     "object",
			"required": []any{k},
			"properties": map[string]any{
				k:    ref("kind." + k),
				"as": ref("as"),
				"if": ref("if"),
			},
			"additionalProperties": false,
		})
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("no JSON Schema for %s", strings.Join(problems, "; "))
	}
	defs["step"] = map[string]any{
		"description": "One step: exactly one kind key (" + strings.Join(kinds, ", ") + "), plus the modifiers as and if.",
		"oneOf":       oneOf,
	}
	return defs, nil
}

func ref(def string) map[string]any { return map[string]any{"$ref": "#/$defs/" + def} }

func reserved() []any {
	out := slices.Sorted(maps.Keys(reservedNames))
	list := make([]any, len(out))
	for i, n := range out {
		list[i] = n
	}
	return list
}

// kindValue is the schema of the value under a kind's key: its scalar form,
// its mapping of fields, or either.
func kindValue(r *Registry, s Spec) (map[string]any, error) {
	var forms []any
	if s.Short != "" {
		f, err := shortForm(s.Short)
		if err != nil {
			return nil, fmt.Errorf("kind %s: %w", s.Kind, err)
		}
		forms = append(forms, f)
	}
	if len(s.Fields) > 0 {
		props := map[string]any{}
		var required []any
		for _, fd := range s.Fields {
			p, err := fieldSchema(r, fd)
			if err != nil {
				return nil, fmt.Errorf("kind %s field %s: %w", s.Kind, fd.Name, err)
			}
			props[fd.Name] = p
			if fd.Required {
				required = append(required, fd.Name)
			}
		}
		obj := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			obj["required"] = required
		}
		forms = append(forms, obj)
	}
	var out map[string]any
	switch len(forms) {
	case 0:
		return nil, fmt.Errorf("kind %s: neither a scalar form nor fields", s.Kind)
	case 1:
		out = forms[0].(map[string]any)
	default:
		out = map[string]any{"oneOf": forms}
	}
	out["description"] = s.Summary
	return out, nil
}

// shortForms are the scalar forms a spec's Short may describe, by its
// leading words.
var shortForms = []struct {
	prefix string
	schema func() map[string]any
}{
	{"a template", text},
	{"a jq program", jqText},
	{"a mapping with status: NAME", func() map[string]any {
		return map[string]any{
			"type":       "object",
			"required":   []any{"status"},
			"properties": map[string]any{"status": map[string]any{"type": "string", "pattern": statusRE.String()}},
		}
	}},
}

func shortForm(short string) (map[string]any, error) {
	for _, f := range shortForms {
		if strings.HasPrefix(short, f.prefix) {
			return f.schema(), nil
		}
	}
	return nil, fmt.Errorf("scalar form %q", short)
}

func str() map[string]any { return map[string]any{"type": "string"} }

// text is a template: a string, or a number or boolean taken as written.
func text() map[string]any { return map[string]any{"type": []any{"string", "number", "boolean"}} }

// jqText is a jq program: as text, or null (the program null).
func jqText() map[string]any {
	return map[string]any{"type": []any{"string", "number", "boolean", "null"}}
}

// durationPattern is what time.ParseDuration reads (without a sign: a
// duration here is positive).
const durationPattern = `^([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))*$`

// extractFields is html's and xml's fields: NAME: a selector, or
// {select, attr, all}.
func extractFields(sel func() map[string]any) func() map[string]any {
	return func() map[string]any {
		return map[string]any{
			"type": "object",
			"additionalProperties": map[string]any{"oneOf": []any{
				sel(),
				map[string]any{
					"type": "object",
					"properties": map[string]any{
						"select": sel(),
						"attr":   str(),
						"all":    map[string]any{"type": "boolean"},
					},
					"additionalProperties": false,
				},
			}},
		}
	}
}

func cssSelector() map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "maxLength": 1000}
}

func xmlPathSchema() map[string]any {
	return map[string]any{"type": "string", "pattern": xmlPathRE.String(), "maxLength": 500}
}

// fieldTypes gives the JSON Schema of each field type a spec may name
// (Field.Type). A type that names a registered kind is that kind's value;
// a type such as "A|B|C" is an enumeration.
var fieldTypes = map[string]func() map[string]any{
	"string":          str,
	"template":        text,
	"template (path)": text,
	"jq":              jqText,
	"path":            xmlPathSchema,
	"css":             cssSelector,
	"regexp":          func() map[string]any { return map[string]any{"type": "string", "maxLength": 2000} },
	"name": func() map[string]any {
		return map[string]any{"type": "string", "pattern": nameRE.String(), "not": map[string]any{"enum": reserved()}}
	},
	"int":      func() map[string]any { return map[string]any{"type": "integer", "minimum": 1} },
	"bool":     func() map[string]any { return map[string]any{"type": "boolean"} },
	"duration": func() map[string]any { return map[string]any{"type": "string", "pattern": durationPattern} },
	"value":    func() map[string]any { return map[string]any{} },
	"steps":    func() map[string]any { return ref("steps") },
	"map of templates": func() map[string]any {
		return map[string]any{"type": "object", "additionalProperties": text()}
	},
	"map of css | {select, attr, all}":  extractFields(cssSelector),
	"map of path | {select, attr, all}": extractFields(xmlPathSchema),
	"{attempts, backoff}": func() map[string]any {
		return map[string]any{
			"type": "object",
			"properties": map[string]any{
				"attempts": map[string]any{"type": "integer", "minimum": 1, "maximum": 5},
				"backoff":  map[string]any{"type": "string", "pattern": durationPattern},
			},
			"additionalProperties": false,
		}
	},
}

var enumType = regexp.MustCompile(`^[A-Za-z_]+(\|[A-Za-z_]+)+$`)

func fieldSchema(r *Registry, f Field) (map[string]any, error) {
	var out map[string]any
	switch mk, known := fieldTypes[f.Type]; {
	case known:
		out = mk()
	case r.has(f.Type):
		out = ref("kind." + f.Type)
	case enumType.MatchString(f.Type):
		var vals []any
		for _, v := range strings.Split(f.Type, "|") {
			vals = append(vals, v)
		}
		out = map[string]any{"enum": vals}
	default:
		return nil, fmt.Errorf("type %q", f.Type)
	}
	if f.Doc != "" {
		out["description"] = f.Doc
	}
	if f.Default != "" && !f.Required {
		switch out["type"] {
		case "boolean":
			if b, err := strconv.ParseBool(f.Default); err == nil {
				out["default"] = b
			}
		case "integer":
			if n, err := strconv.Atoi(f.Default); err == nil {
				out["default"] = n
			}
		default:
			// A string, a template or a jq program (a list of types), or
			// anything.
			if _, isRef := out["$ref"]; !isRef {
				out["default"] = f.Default
			}
		}
	}
	return out, nil
}
