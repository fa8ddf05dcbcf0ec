package remote

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/manifest"
)

// Bounds on what a server may declare.
const (
	MaxTools        = 128      // tools listed
	maxNameLen      = 200      // a server's name or title, in bytes
	maxDescLen      = 4000     // a tool's description, in bytes
	maxInstructions = 8000     // the server's instructions, in bytes
	maxSchemaBytes  = 64 << 10 // one input schema, as JSON
	maxManifest     = 2 << 20  // the whole manifest, as JSON
)

// Manifest is what adding a remote plugin caches: who the server says it is
// and the tools it listed, each checked.
type Manifest struct {
	ID            string    `json:"id"`  // "mcp-<slug>"
	URL           string    `json:"url"` // the Streamable HTTP endpoint
	ServerName    string    `json:"serverName"`
	ServerTitle   string    `json:"serverTitle,omitempty"`
	ServerVersion string    `json:"serverVersion,omitempty"`
	Instructions  string    `json:"instructions,omitempty"` // the server's own, third-party text
	Tools         []Tool    `json:"tools"`
	Skipped       []string  `json:"skipped,omitempty"` // tools left out, and why
	Listed        time.Time `json:"listed"`
	// Resolve is the user's --resolve mappings for this server, kept so
	// every later connection dials the same addresses.
	Resolve map[string]string `json:"resolve,omitempty"`
}

// Tool is one of a remote plugin's tools.
type Tool struct {
	Name        string          `json:"name"`   // cleaned: the registry's name
	Remote      string          `json:"remote"` // the server's name for it, sent on a call
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	Effect      manifest.Effect `json:"effect"` // read when readOnlyHint is true, else write
	Input       map[string]any  `json:"input"`
	Destructive bool            `json:"destructive,omitempty"`
	Idempotent  bool            `json:"idempotent,omitempty"`
	// ClosedWorld is true when the server says the tool reaches nothing
	// outside itself (openWorldHint: false).
	ClosedWorld bool `json:"closedWorld,omitempty"`
}

// Tool returns the tool of that (cleaned) name, or nil.
func (m *Manifest) Tool(name string) *Tool {
	for i := range m.Tools {
		if m.Tools[i].Name == name {
			return &m.Tools[i]
		}
	}
	return nil
}

// ToolID is the registry's id of a tool: "mcp-<server>.<tool>".
func (m *Manifest) ToolID(t *Tool) string { return m.ID + "." + t.Name }

// build checks what a server said and makes the manifest. Tools that break a
// rule are left out and named in Skipped; a server whose own name breaks one
// is refused.
func build(url string, init *mcp.InitializeResult, tools []*mcp.Tool, now time.Time) (*Manifest, error) {
	if init == nil || init.ServerInfo == nil {
		return nil, fmt.Errorf("the server did not say its name in its initialize answer")
	}
	si := init.ServerInfo
	for what, s := range map[string]string{"name": si.Name, "title": si.Title, "version": si.Version} {
		if len(s) > maxNameLen {
			return nil, fmt.Errorf("the server's %s is longer than %d bytes", what, maxNameLen)
		}
		if err := manifest.CheckText(s, false); err != nil {
			return nil, fmt.Errorf("the server's %s %v", what, err)
		}
	}
	id, err := PluginID(si.Name)
	if err != nil {
		return nil, err
	}
	m := &Manifest{ID: id, URL: url, ServerName: si.Name, ServerTitle: si.Title, ServerVersion: si.Version, Listed: now.UTC()}
	if ins := init.Instructions; ins != "" {
		if len(ins) > maxInstructions {
			ins = cut(ins, maxInstructions)
		}
		if manifest.CheckText(ins, true) == nil {
			m.Instructions = ins
		}
	}
	sorted := slices.Clone(tools)
	slices.SortFunc(sorted, func(a, b *mcp.Tool) int {
		switch {
		case a == nil || b == nil:
			return boolCmp(a == nil, b == nil)
		}
		return strings.Compare(a.Name, b.Name)
	})
	// A name listed twice says two things of one tool: which one would be
	// kept must not depend on the order of the listing, so neither is.
	listed := map[string]int{}
	for _, t := range sorted {
		if t != nil {
			listed[t.Name]++
		}
	}
	seen := map[string]string{}
	for i, t := range sorted {
		if t != nil && listed[t.Name] > 1 {
			if i == 0 || sorted[i-1] == nil || sorted[i-1].Name != t.Name {
				m.Skipped = append(m.Skipped, fmt.Sprintf("%q: the server lists it more than once", cut(t.Name, 60)))
			}
			continue
		}
		if len(m.Tools) >= MaxTools {
			m.Skipped = append(m.Skipped, fmt.Sprintf("tools past the first %d", MaxTools))
			break
		}
		tool, why := checkTool(t)
		if why != "" {
			m.Skipped = append(m.Skipped, fmt.Sprintf("%q: %s", cut(t.Name, 60), why))
			continue
		}
		if prev, dup := seen[tool.Name]; dup {
			m.Skipped = append(m.Skipped, fmt.Sprintf("%q: its cleaned name %s is already %q's", cut(t.Name, 60), tool.Name, prev))
			continue
		}
		if n := len(manifest.ModelName(id, tool.Name)); n > manifest.MaxModelNameLen {
			m.Skipped = append(m.Skipped, fmt.Sprintf("%q: the model's name %s would be %d characters (at most %d)", cut(t.Name, 60), manifest.ModelName(id, tool.Name), n, manifest.MaxModelNameLen))
			continue
		}
		seen[tool.Name] = t.Name
		m.Tools = append(m.Tools, tool)
	}
	if b, err := json.Marshal(m); err != nil || len(b) > maxManifest {
		return nil, fmt.Errorf("the server's tool list is larger than %d bytes", maxManifest)
	}
	return m, nil
}

// checkTool reads one listed tool, or says why it is left out.
func checkTool(t *mcp.Tool) (Tool, string) {
	if t == nil {
		return Tool{}, "no tool"
	}
	name := CleanToolName(t.Name)
	if name == "" {
		return Tool{}, "no name"
	}
	if len(t.Name) > 4*MaxToolNameLen {
		return Tool{}, fmt.Sprintf("its name is longer than %d bytes", 4*MaxToolNameLen)
	}
	out := Tool{Name: name, Remote: t.Name, Effect: manifest.Write}
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	if len(title) > maxNameLen {
		return Tool{}, fmt.Sprintf("its title is longer than %d bytes", maxNameLen)
	}
	if err := manifest.CheckText(title, false); err != nil {
		return Tool{}, "its title " + err.Error()
	}
	out.Title = title
	if len(t.Description) > maxDescLen {
		return Tool{}, fmt.Sprintf("its description is longer than %d bytes", maxDescLen)
	}
	if err := manifest.CheckText(t.Description, true); err != nil {
		return Tool{}, "its description " + err.Error()
	}
	out.Description = strings.TrimSpace(t.Description)
	if out.Description == "" {
		out.Description = "(The server gave no description.)"
	}
	if a := t.Annotations; a != nil {
		if a.ReadOnlyHint {
			out.Effect = manifest.Read
		}
		out.Destructive = a.DestructiveHint != nil && *a.DestructiveHint && out.Effect != manifest.Read
		out.Idempotent = a.IdempotentHint || out.Effect == manifest.Read
		out.ClosedWorld = a.OpenWorldHint != nil && !*a.OpenWorldHint
	}
	in, why := checkSchema(t.InputSchema)
	if why != "" {
		return Tool{}, why
	}
	out.Input = in
	return out, ""
}

// checkSchema decodes an input schema and holds it to the document rules: a
// self-contained JSON Schema object of type object, within size, whose text
// meets the text rules.
func checkSchema(s any) (map[string]any, string) {
	if s == nil {
		return map[string]any{"type": "object"}, ""
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, "its input schema is not JSON"
	}
	if len(b) > maxSchemaBytes {
		return nil, fmt.Sprintf("its input schema is larger than %d bytes", maxSchemaBytes)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, "its input schema is not a JSON object"
	}
	if typ, _ := m["type"].(string); typ != "object" {
		return nil, "its input schema is not of type object"
	}
	if err := manifest.CheckSchemaText(m); err != nil {
		return nil, "its input schema: " + err.Error()
	}
	if _, err := manifest.CompileSchema(m); err != nil {
		return nil, "its input schema does not compile: " + cut(err.Error(), 200)
	}
	return m, ""
}

// boolCmp orders true before false.
func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
