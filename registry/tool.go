package registry

import (
	"context"
	"sync"

	"github.com/pkuinfo/harness/manifest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Runner runs the tools of one document. The interpreter's compiled program
// is one (through a small adapter); a host may supply others.
type Runner interface {
	RunTool(ctx context.Context, req RunRequest) (any, error)
}

// Output is what a Runner returns when the model's copy of a result is not
// the whole of it: the harness cuts each result to 12,000 characters for
// the model, while the UI keeps the full output (the reference). Model goes
// to the agent as the envelope's data; Full is the envelope's Full.
type Output struct {
	Model any
	Full  any
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, req RunRequest) (any, error)

// RunTool calls f.
func (f RunnerFunc) RunTool(ctx context.Context, req RunRequest) (any, error) { return f(ctx, req) }

// RunRequest is one validated, permitted call.
type RunRequest struct {
	Plugin string         // the plugin id
	Tool   string         // the tool's name inside the plugin
	Input  map[string]any // validated against the tool's input schema
	Prefs  map[string]any // the plugin's preference values, defaults filled in
	Actor  Actor
	Trust  Trust // the document's: where its private data lives depends on it
	// Turn is the agent's turn the call is part of (the reference's
	// ctx.turn); nil for the user's and the scheduler's calls.
	Turn *TurnInfo
	// Grant is how the user answered the ask of this call (the reference's
	// ctx.grant): "once", "always" (also a standing grant), "" when nobody
	// was asked.
	Grant string
}

// TurnInfo is what a tool may know of the agent's turn.
type TurnInfo struct {
	SessionID string
	Tainted   bool
	UserAsked bool
}

// Compiler makes the Runner of a document. It is called once per document,
// on the first call of one of its tools.
type Compiler func(p *manifest.Plugin) (Runner, error)

// NativeTool is a tool the host implements in Go. It meets the same
// permission rules as a document's tool.
type NativeTool interface {
	Name() string // the tool's name inside its plugin, [a-z][A-Za-z0-9_-]*
	Description() string
	Effect() manifest.Effect
	InputSchema() map[string]any // a JSON Schema object with type: object
	Run(ctx context.Context, input map[string]any) (any, error)
}

// NativeFlags is an optional interface of a NativeTool for the flags a
// document's tool may carry.
type NativeFlags interface {
	Flags() Flags
}

// Flags are a tool's permission flags.
type Flags struct {
	Untrusted bool // its results are untrusted (taint the turn)
	UserOnly  bool // hidden from the model; refused for agent and scheduler
	AlwaysAsk bool // asks on every agent call whatever the mode
	Serial    bool // never runs concurrently with itself
}

// NativePlugin names the plugin native tools are grouped under.
type NativePlugin struct {
	ID, Name, Description, Instructions string
}

// Tool is one tool the registry knows.
type Tool struct {
	ID          string // "<plugin>.<tool>"
	ModelName   string // "<plugin>__<tool>"
	Plugin      string
	Name        string
	Title       string
	Description string
	// Effect is the effect the permission rules apply: the declared one,
	// raised to at least write when the tool's steps can send an unsafe
	// method outside the catalogue's query endpoints (EffectWhy says so).
	Effect manifest.Effect
	// Declared is the effect the document declares.
	Declared manifest.Effect
	// EffectWhy says why Effect is above Declared ("declared read, sends
	// POST to card /x"); "" when it is not.
	EffectWhy string
	Flags
	Input map[string]any // the input JSON Schema as data

	schema *jsonschema.Schema
	doc    *Document
	native NativeTool
	sem    chan struct{} // capacity 1, for serial tools
}

// Document returns the document the tool belongs to.
func (t *Tool) Document() *Document { return t.doc }

// Document is one plugin the registry holds: a parsed document, or the
// group of native tools under one plugin id.
type Document struct {
	ID          string
	Name        string
	Description string
	Trust       Trust
	Origin      Origin
	Core        bool             // cannot be disabled
	Plugin      *manifest.Plugin // nil for native tools
	Tools       []*Tool          // sorted by name

	// Unavailable is why the host cannot offer the document ("" when it can).
	Unavailable string

	instructions string
	hashOnce     sync.Once // hash: the content hash standing grants are bound to
	hash         string
	once         sync.Once
	runner       Runner
	runErr       error
}

// Instructions returns the document's instructions for the agent.
func (d *Document) Instructions() string { return d.instructions }

// Origin is where a document comes from.
type Origin string

// The origins.
const (
	Bundled   Origin = "bundled"
	Installed Origin = "installed"
	Native    Origin = "native"
)
