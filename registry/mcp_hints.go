package registry

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/steps"
	"go.yaml.in/yaml/v3"
)

// Hints are what an MCP client is told about a tool beside its effect.
// They grant nothing: the permission rules never read them.
type Hints struct {
	Destructive bool // it deletes, cancels or overwrites (a write that only adds is not)
	Idempotent  bool // a repeated call with the same input has no further effect
	OpenWorld   bool // it reaches the network
}

// NativeHints is an optional interface of a NativeTool for its Hints;
// without it a native tool is local, not destructive, and idempotent only
// when it reads.
type NativeHints interface {
	Hints() Hints
}

// Hints are the tool's hints: for a document's tool, destructive and
// idempotent as its author declared them (reads are idempotent) and open
// world when any of its steps sends requests.
func (t *Tool) Hints() Hints {
	read := t.Effect == manifest.Read
	if t.native != nil {
		if nh, ok := t.native.(NativeHints); ok {
			h := nh.Hints()
			h.Destructive = h.Destructive && !read
			h.Idempotent = h.Idempotent || read
			return h
		}
		return Hints{Idempotent: read}
	}
	h := Hints{Idempotent: read}
	if t.doc == nil || t.doc.Plugin == nil {
		return h
	}
	for _, mt := range t.doc.Plugin.Tools {
		if mt.Name == t.Name {
			h.Destructive = mt.Destructive && !read
			h.Idempotent = mt.Idempotent || read
			h.OpenWorld = reachesNetwork(mt.Steps)
		}
	}
	return h
}

// reachesNetwork reports whether a steps tree holds a step of a kind that
// sends requests, at any depth. Every mapping key counts, so a key that
// only looks like such a kind errs on the side of the open world.
func reachesNetwork(n *yaml.Node) bool {
	if n == nil {
		return false
	}
	kinds := steps.Builtin()
	var walk func(n *yaml.Node, depth int) bool
	walk = func(n *yaml.Node, depth int) bool {
		if depth > 64 {
			return true
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if sp, ok := kinds.Spec(n.Content[i].Value); ok && sp.Caps.Network {
					return true
				}
			}
		}
		for _, c := range n.Content {
			if walk(c, depth+1) {
				return true
			}
		}
		return false
	}
	return walk(n, 0)
}

// Setting a preference overwrites its value; setting it again changes
// nothing more.
func (settingsSet) Hints() Hints { return Hints{Destructive: true, Idempotent: true} }

// The askers AllowHint names besides the modes command.
const (
	mcpAsker = "use an MCP client that supports elicitation (form mode)"
	// RunAsker is the other way to approve a call of `harness run`.
	RunAsker = "pass --approve"
)

// AllowHint says which command would allow a refused call: for an effect
// that is off, or an ask nobody could answer, the `harness modes` line
// within the trust's bounds, or else the asker (how the caller approves one
// call). It is "" for refusals no setting changes (a bad input, a userOnly
// tool, the user's no).
func AllowHint(d Decision, asker string) string {
	t := d.Tool
	if t == nil || t.doc == nil {
		return ""
	}
	doc := t.doc
	modes := func(m manifest.Mode) string {
		return fmt.Sprintf("`harness modes %s %s %s`", doc.ID, t.Effect, m)
	}
	autoOK := CheckMode(doc.Trust, t.Effect, manifest.Auto) == nil
	switch d.Reason {
	case ReasonModeOff:
		if autoOK {
			return fmt.Sprintf("run %s to allow it (or %s to have it ask first)", modes(manifest.Auto), modes(manifest.Ask))
		}
		return fmt.Sprintf("run %s to allow it after asking", modes(manifest.Ask))
	case ReasonNoApprover, ReasonModeAsk:
		switch {
		case t.AlwaysAsk:
			return fmt.Sprintf("%s asks before every call whatever the mode: %s", t.ID, asker)
		case d.Mode == manifest.Ask && autoOK:
			return fmt.Sprintf("run %s to allow it without asking, or %s", modes(manifest.Auto), asker)
		case d.Mode == manifest.Ask:
			return fmt.Sprintf("a %s plugin's %s tools always ask: %s", doc.Trust, t.Effect, asker)
		default:
			// asked because the turn read untrusted data
			return fmt.Sprintf("this session read untrusted data, so its writes ask: %s, or start a new session", asker)
		}
	}
	return ""
}

// codedErrors gives every error answer a JSON-RPC code: the SDK answers
// some mistakes (a second initialize, a tool handler's failure) with a
// plain error, which goes out with code 0.
func codedErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil {
			return res, nil
		}
		var we *jsonrpc.Error
		if errors.As(err, &we) && we.Code != 0 {
			return res, err
		}
		code := int64(jsonrpc.CodeInternalError)
		if method == "initialize" {
			code = jsonrpc.CodeInvalidRequest
		}
		return nil, &jsonrpc.Error{Code: code, Message: err.Error()}
	}
}
