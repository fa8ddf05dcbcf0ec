package registry

import (
	"bytes"
	"encoding/json"

	"github.com/pkuinfo/harness/manifest"
)

// SchemaDraft is the JSON Schema dialect of the catalogue's input schemas.
const SchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// Catalogue is what the agent is given: the tools it may call, grouped by
// plugin with each plugin's instructions.
type Catalogue struct {
	Plugins []CataloguePlugin `json:"plugins"`
	Hidden  []Hidden          `json:"hidden,omitempty"` // left out, and why
}

// CataloguePlugin is one plugin in the catalogue.
type CataloguePlugin struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Trust       Trust  `json:"trust"`
	// Origin is where the plugin comes from: bundled, installed, native
	// or remote (an MCP server, whose name is the server's own words).
	Origin Origin `json:"origin,omitempty"`
	Icon   string `json:"icon,omitempty"`
	// MaxAgentSteps is the document's maxAgentSteps, the agent's step
	// budget it asks for (0: the host's); it grants nothing.
	MaxAgentSteps int             `json:"maxAgentSteps,omitempty"`
	Instructions  string          `json:"instructions"`
	Tools         []CatalogueTool `json:"tools"`
}

// CatalogueTool is one tool as the model sees it.
type CatalogueTool struct {
	Name        string          `json:"name"` // the model name, plugin__tool
	ID          string          `json:"id"`   // plugin.tool
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Effect      manifest.Effect `json:"effect"`
	Mode        manifest.Mode   `json:"mode"`      // auto, or ask: the call waits for the user
	Untrusted   bool            `json:"untrusted"` // its results are marked untrusted
	InputSchema map[string]any  `json:"inputSchema"`
}

// Hidden is a plugin or tool left out of the catalogue.
type Hidden struct {
	ID      string `json:"id"`
	Reason  Reason `json:"reason"`
	Message string `json:"message"`
}

// CatalogueOptions shape the catalogue.
type CatalogueOptions struct {
	// Lang picks the document's translated plugin name and description
	// and tool titles (i18n) where it has them. A tool's description is
	// never translated (the reference: "You can write it in English or
	// Chinese, and it is never translated").
	Lang string
}

// Catalogue lists the tools the agent may see: every tool of every
// available, enabled plugin except userOnly tools and tools whose effect is
// off. Input schemas are self-contained draft 2020-12 schemas.
func (r *Registry) Catalogue(o CatalogueOptions) (Catalogue, error) {
	c := Catalogue{Plugins: []CataloguePlugin{}}
	all, err := r.loadSettings()
	if err != nil {
		return c, err
	}
	for _, d := range r.Documents() {
		ps := r.merged(all, d)
		switch {
		case d.Unavailable != "":
			c.Hidden = append(c.Hidden, Hidden{ID: d.ID, Reason: ReasonUnavailable, Message: d.Unavailable})
			continue
		case ps.Disabled && !d.Core:
			c.Hidden = append(c.Hidden, Hidden{ID: d.ID, Reason: ReasonDisabled, Message: "the user turned it off"})
			continue
		}
		cp := CataloguePlugin{ID: d.ID, Name: d.Name, Description: d.Description, Trust: d.Trust, Origin: d.Origin,
			Instructions: d.instructions, Tools: []CatalogueTool{}}
		var tr manifest.I18n
		if d.Plugin != nil {
			cp.Icon, cp.MaxAgentSteps = d.Plugin.Icon, d.Plugin.MaxAgentSteps
		}
		if d.Plugin != nil && o.Lang != "" {
			tr = d.Plugin.I18n[o.Lang]
			if tr.Name != "" {
				cp.Name = tr.Name
			}
			if tr.Description != "" {
				cp.Description = tr.Description
			}
		}
		for _, t := range d.Tools {
			mode := Effective(d.Trust, d.Plugin, t.Effect, ps.Modes[t.Effect])
			switch {
			case t.UserOnly:
				c.Hidden = append(c.Hidden, Hidden{ID: t.ID, Reason: ReasonUserOnly, Message: "for the user only"})
				continue
			case mode != manifest.Auto && mode != manifest.Ask:
				c.Hidden = append(c.Hidden, Hidden{ID: t.ID, Reason: ReasonModeOff, Message: string(t.Effect) + " tools are off"})
				continue
			}
			if t.AlwaysAsk {
				mode = manifest.Ask
			}
			ct := CatalogueTool{Name: t.ModelName, ID: t.ID, Title: t.Title, Description: t.Description,
				Effect: t.Effect, Mode: mode, Untrusted: d.Trust != Official || t.Untrusted, InputSchema: selfContained(t.Input)}
			if x, ok := tr.Tools[t.Name]; ok {
				if x.Title != "" {
					ct.Title = x.Title
				}
			}
			cp.Tools = append(cp.Tools, ct)
		}
		c.Plugins = append(c.Plugins, cp)
	}
	return c, nil
}

// selfContained returns a deep copy of schema with its dialect named.
func selfContained(schema map[string]any) map[string]any {
	out := deepCopy(schema).(map[string]any)
	if _, ok := out["$schema"]; !ok {
		out["$schema"] = SchemaDraft
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// Tools lists the catalogue's tools in order, across plugins.
func (c Catalogue) Tools() []CatalogueTool {
	var out []CatalogueTool
	for _, p := range c.Plugins {
		out = append(out, p.Tools...)
	}
	return out
}

// exportSchema is an input schema for a function-calling API: the dialect
// line dropped, as those APIs take the schema body.
func exportSchema(s map[string]any) map[string]any {
	out := deepCopy(s).(map[string]any)
	delete(out, "$schema")
	return out
}

// OpenAITool is one entry of OpenAI's tools list.
type OpenAITool struct {
	Type     string         `json:"type"` // "function"
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is a function in OpenAI's function-calling shape.
type OpenAIFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// OpenAI exports the catalogue's tools in OpenAI's function-calling shape.
func (c Catalogue) OpenAI() []OpenAITool {
	out := []OpenAITool{}
	for _, t := range c.Tools() {
		out = append(out, OpenAITool{Type: "function", Function: OpenAIFunction{
			Name: t.Name, Description: t.Description, Parameters: exportSchema(t.InputSchema)}})
	}
	return out
}

// AnthropicTool is one entry of Anthropic's tools list.
type AnthropicTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

// Anthropic exports the catalogue's tools in Anthropic's tool-use shape.
func (c Catalogue) Anthropic() []AnthropicTool {
	out := []AnthropicTool{}
	for _, t := range c.Tools() {
		out = append(out, AnthropicTool{Name: t.Name, Description: t.Description, InputSchema: exportSchema(t.InputSchema)})
	}
	return out
}

// MarshalIndent renders v as indented JSON with a final newline, without
// escaping <, > and & (descriptions are text for a model, not HTML).
func MarshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
