package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
)

// Limits of the PLUGIN.md parts.
const (
	MaxFrontMatterBytes = 64 << 10  // the YAML between the --- lines
	MaxToolBytes        = 256 << 10 // one tool's YAML
	MaxTools            = 64
	MaxWidgetBytes      = 256 << 10
)

// yamlLimits bound the YAML of a tool and of a test file, in a file of its
// own or in a fenced block.
var yamlLimits = map[string]yamlx.Limits{
	"tool": {MaxBytes: MaxToolBytes, MaxKeys: 20000, MaxDepth: 24},
	"test": {MaxBytes: MaxFileBytes, MaxKeys: 50000, MaxDepth: 40},
}

var (
	idRE       = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	toolNameRE = regexp.MustCompile(`^[a-z][A-Za-z0-9_-]*$`)
	keyRE      = regexp.MustCompile(`^[a-z][A-Za-z0-9_-]*$`)
)

// MaxIDLen and MaxToolNameLen bound names; the model's name
// "<id>__<tool>" must fit the 64 characters function-calling APIs allow.
const (
	MaxIDLen        = 40
	MaxToolNameLen  = 40
	MaxModelNameLen = 64
)

// ModelName is the name the model sees for a tool: the tool id
// "<plugin>.<tool>" with the first "." replaced by "__".
func ModelName(pluginID, tool string) string { return pluginID + "__" + tool }

// Parse parses and validates a document's files: the front matter, the
// body's instructions and fenced blocks, tools/*.yaml, widgets/*.json and
// tests/*.yaml. Steps are kept raw; their kinds are checked by the steps
// package. Every problem is in the returned list, sorted.
func Parse(files Files) (*Plugin, diag.List) {
	var l diag.List
	p := &Plugin{Files: files, Widgets: map[string][]byte{}, KeyPos: map[string]diag.Pos{}}
	defer l.Sort()
	if err := files.Check(); err != nil {
		l.Errorf(diag.Pos{File: "PLUGIN.md", Line: 1, Col: 1}, "%v", err)
		return p, l
	}
	src := files["PLUGIN.md"]
	fm, fmLine, body, bodyLine, ok := splitFrontMatter(src, &l)
	if !ok {
		return p, l
	}
	p.Pos = diag.Pos{File: "PLUGIN.md", Line: 1, Col: 1}
	sc := newSchemaCompiler()
	doc := yamlx.Parse("PLUGIN.md", fm, fmLine, nil, yamlx.Limits{MaxBytes: MaxFrontMatterBytes, MaxKeys: 5000, MaxDepth: 16}, &l)
	if doc.Safe() {
		parseFrontMatter(p, doc, sc, &l)
	} else if !l.HasErrors() {
		l.Errorf(diag.Pos{File: "PLUGIN.md", Line: 1, Col: 1}, "the front matter is empty: it needs at least id, name, description and version")
	}
	blocks := parseBody(p, body, bodyLine, &l)
	for _, name := range files.Names() {
		dir, base := path.Split(name)
		switch {
		case dir == "tools/":
			ext := path.Ext(base)
			if ext != ".yaml" && ext != ".yml" {
				l.Errorf(diag.Pos{File: name, Line: 1, Col: 1}, "tools/ holds only NAME.yaml files")
				continue
			}
			d := yamlx.Parse(name, files[name], 1, nil, yamlLimits["tool"], &l)
			blocks = append(blocks, &Block{Kind: "tool", Name: strings.TrimSuffix(base, ext), Doc: d, Text: files[name], Pos: diag.Pos{File: name, Line: 1, Col: 1}})
		case dir == "widgets/":
			if path.Ext(base) != ".json" {
				l.Errorf(diag.Pos{File: name, Line: 1, Col: 1}, "widgets/ holds only NAME.json files")
				continue
			}
			blocks = append(blocks, &Block{Kind: "widget", Name: strings.TrimSuffix(base, ".json"), Text: files[name], Pos: diag.Pos{File: name, Line: 1, Col: 1}})
		case dir == "tests/" && (path.Ext(base) == ".yaml" || path.Ext(base) == ".yml"):
			d := yamlx.Parse(name, files[name], 1, nil, yamlLimits["test"], &l)
			blocks = append(blocks, &Block{Kind: "test", Name: strings.TrimSuffix(base, path.Ext(base)), Doc: d, Text: files[name], Pos: diag.Pos{File: name, Line: 1, Col: 1}})
		// A file the engine would not read must not look read: a test case
		// in a subfolder would never run, a tool would never be offered.
		case strings.HasPrefix(name, "tools/"):
			l.Errorf(diag.Pos{File: name, Line: 1, Col: 1}, "tools/ holds only NAME.yaml files, no folders")
		case strings.HasPrefix(name, "widgets/"):
			l.Errorf(diag.Pos{File: name, Line: 1, Col: 1}, "widgets/ holds only NAME.json files, no folders")
		case strings.HasPrefix(name, "tests/"):
			if ext := strings.ToLower(path.Ext(base)); ext == ".yaml" || ext == ".yml" {
				l.Errorf(diag.Pos{File: name, Line: 1, Col: 1}, "tests/ holds only NAME.yaml files (lower-case .yaml or .yml, no folders): this file's cases would never run")
			} else {
				l.Warnf(diag.Pos{File: name, Line: 1, Col: 1}, "this file is not read: test files are tests/NAME.yaml")
			}
		}
	}
	p.Broken = map[string]bool{}
	seen := map[[2]string]diag.Pos{} // a tool's or widget's kind and name
	// Review and the permission modes must never take two tools for one.
	foldedTool := map[string]string{}
	for _, b := range blocks {
		if prev, dup := seen[[2]string{b.Kind, b.Name}]; dup && b.Kind != "test" {
			l.Errorf(b.Pos, "%s %q is defined twice (also at %s)", b.Kind, b.Name, prev)
			continue
		}
		seen[[2]string{b.Kind, b.Name}] = b.Pos
		switch b.Kind {
		case "tool":
			if other, dup := foldedTool[strings.ToLower(b.Name)]; dup {
				l.Errorf(b.Pos, "tool names %q and %q differ only in case", other, b.Name)
				continue
			}
			foldedTool[strings.ToLower(b.Name)] = b.Name
			if !toolNameRE.MatchString(b.Name) || len(b.Name) > MaxToolNameLen {
				l.Errorf(b.Pos, "tool name %q must match [a-z][A-Za-z0-9_-]* and be at most %d characters", b.Name, MaxToolNameLen)
				continue
			}
			if p.ID != "" && len(ModelName(p.ID, b.Name)) > MaxModelNameLen {
				l.Errorf(b.Pos, "the model's name %q is longer than %d characters: shorten the id or the tool name", ModelName(p.ID, b.Name), MaxModelNameLen)
			}
			if len(p.Tools) >= MaxTools {
				l.Errorf(b.Pos, "more than %d tools", MaxTools)
				continue
			}
			if t := parseTool(b, sc, &l); t != nil {
				p.Tools = append(p.Tools, t)
			} else {
				// Its one error is reported: what names it is not.
				p.Broken[b.Name] = true
			}
		case "widget":
			if len(b.Text) > MaxWidgetBytes {
				l.Errorf(b.Pos, "widget %q is more than %d bytes", b.Name, MaxWidgetBytes)
				continue
			}
			if err := checkJSON(b.Text); err != nil {
				l.Errorf(b.Pos, "widget %q is not valid JSON: %v", b.Name, err)
				continue
			}
			p.Widgets[b.Name] = b.Text
		case "test":
			p.Tests = append(p.Tests, b)
		}
	}
	sort.Slice(p.Tools, func(i, j int) bool { return p.Tools[i].Name < p.Tools[j].Name })
	crossCheck(p, &l)
	return p, l
}

// checkJSON checks a JSON text's syntax and nesting depth, and that it is
// one value.
func checkJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return err
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			if depth > 64 {
				return fmt.Errorf("nested deeper than 64 levels")
			}
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
	if !json.Valid(b) {
		return fmt.Errorf("not a single JSON value")
	}
	return nil
}

// splitFrontMatter finds the YAML between a first line "---" and the next
// line "---". It returns the YAML, its first line, the body and its first line.
func splitFrontMatter(src []byte, l *diag.List) (fm []byte, fmLine int, body []byte, bodyLine int, ok bool) {
	pos := diag.Pos{File: "PLUGIN.md", Line: 1, Col: 1}
	// A byte-order mark (some editors write one) is not text: YAML and
	// Markdown both pass over it, and so does the front matter's first line.
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	first, rest, found := bytes.Cut(src, []byte("\n"))
	if !found || strings.TrimRight(string(first), "\r") != "---" {
		l.Errorf(pos, "PLUGIN.md must start with a front matter: a line \"---\", the YAML manifest, and a line \"---\"")
		return nil, 0, nil, 0, false
	}
	off, line := 0, 2 // where the line starts in rest, and its number
	for ln := range bytes.Lines(rest) {
		if t := strings.TrimRight(string(ln), "\r\n \t"); t == "---" || t == "..." {
			return rest[:off], 2, rest[off+len(ln):], line + 1, true
		}
		if off > MaxFrontMatterBytes {
			break
		}
		off += len(ln)
		line++
	}
	if len(rest) > MaxFrontMatterBytes {
		l.Errorf(pos, "the front matter has no closing \"---\" within %d bytes", MaxFrontMatterBytes)
	} else {
		l.Errorf(pos, "the front matter has no closing \"---\" line")
	}
	return nil, 0, nil, 0, false
}
