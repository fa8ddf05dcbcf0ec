package yamlx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// SchemaFile is a whole JSON Schema document: draft 2020-12, its $id, title
// and description, the root's keywords and g's definitions as $defs.
func SchemaFile(id, title, doc string, root map[string]any, g *Gen) map[string]any {
	out := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         id,
		"title":       title,
		"description": doc,
	}
	for k, v := range root {
		if _, set := out[k]; !set {
			out[k] = v
		}
	}
	if len(g.Defs) > 0 {
		out["$defs"] = g.Defs
	}
	return out
}

// EncodeSchema writes a schema as indented JSON for people to read: keys in
// a reader's order ($schema, $id, title, description, $ref, type first,
// $defs last, the rest sorted; names of properties and definitions sorted
// plainly), and any object or array whose compact form fits a line of 100
// characters on one line. The same value always gives the same bytes.
func EncodeSchema(v any) ([]byte, error) {
	// Through JSON first: typed slices and integers become what a reader
	// of the file gets back.
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var plain any
	if err := json.Unmarshal(j, &plain); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	writeJSON(&b, plain, 0, 0, false)
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// CheckFile compares a generated file with the one at path; with update
// set it rewrites the file instead. The error says how to regenerate.
func CheckFile(path string, want []byte, update bool, how string) error {
	got, err := os.ReadFile(path)
	if err == nil && bytes.Equal(got, want) {
		return nil
	}
	if update {
		return os.WriteFile(path, want, 0o644)
	}
	if err != nil {
		return fmt.Errorf("%s: %v (%s)", path, err, how)
	}
	return fmt.Errorf("%s is out of date: %s", path, how)
}

const schemaLineWidth = 100

var schemaKeyRank = map[string]int{"$schema": -6, "$id": -5, "title": -4, "description": -3, "$ref": -2, "type": -1, "$defs": 1}

// schemaNameMaps hold names (of properties, of definitions), not keywords.
var schemaNameMaps = map[string]bool{"properties": true, "$defs": true, "patternProperties": true, "dependentSchemas": true}

func writeJSON(b *bytes.Buffer, v any, depth, used int, names bool) {
	if c := compactJSON(v, names); depth*2+used+len(c) <= schemaLineWidth {
		b.WriteString(c)
		return
	}
	pad := strings.Repeat("  ", depth+1)
	switch x := v.(type) {
	case map[string]any:
		b.WriteString("{\n")
		keys := schemaKeys(x, names)
		for i, k := range keys {
			key := compactJSON(k, false) + ": "
			b.WriteString(pad + key)
			writeJSON(b, x[k], depth+1, len(key), !names && schemaNameMaps[k])
			if i < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(pad[2:] + "}")
	case []any:
		b.WriteString("[\n")
		for i, e := range x {
			b.WriteString(pad)
			writeJSON(b, e, depth+1, 0, false)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(pad[2:] + "]")
	default:
		b.WriteString(compactJSON(v, false))
	}
}

func compactJSON(v any, names bool) string {
	switch x := v.(type) {
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range schemaKeys(x, names) {
			parts = append(parts, compactJSON(k, false)+": "+compactJSON(x[k], !names && schemaNameMaps[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, compactJSON(e, false))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		return strings.TrimSuffix(b.String(), "\n")
	}
}

func schemaKeys(m map[string]any, names bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if names {
			return keys[i] < keys[j]
		}
		ri, rj := schemaKeyRank[keys[i]], schemaKeyRank[keys[j]]
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// Between replaces what doc holds between the lines "<!-- NAME:begin -->"
// and "<!-- NAME:end -->" with body (a generated section of a Markdown
// page); false when the markers are missing.
func Between(doc, name, body string) (string, bool) {
	begin, end := "<!-- "+name+":begin -->\n", "<!-- "+name+":end -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i+len(begin) {
		return doc, false
	}
	return doc[:i+len(begin)] + body + doc[j:], true
}

// Tables renders declarations' reference tables one after the other, each
// named in italics when there are several.
func Tables(decls ...*Decl) string {
	if len(decls) == 1 {
		return decls[0].Table()
	}
	var b strings.Builder
	for i, d := range decls {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("*" + d.Name + "*\n\n" + d.Table())
	}
	return b.String()
}
