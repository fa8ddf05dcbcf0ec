package remote

import (
	"fmt"
	"reflect"
	"slices"
)

// Change is one difference between two listings of a server's tools.
type Change struct {
	Tool  string `json:"tool"`
	What  string `json:"what"`
	Wider bool   `json:"wider"` // more access than before: waits for the user
}

// Diff compares a server's cached tools with a new listing, as a document
// update is compared: a new tool that is not a read, or a read tool that
// became a write, is wider and waits; a removed tool, or a write that became
// a read, is narrower; a changed description, title or input schema is
// shown. A server whose name gives another plugin id, or a new URL, is not
// an update at all.
func Diff(old, cur *Manifest) (changes []Change, wider bool, err error) {
	if old.ID != cur.ID {
		return nil, false, fmt.Errorf("the server now calls itself %q (plugin id %s, was %s): remove the plugin and add it again", cut(cur.ServerName, 60), cur.ID, old.ID)
	}
	names := map[string]bool{}
	for _, t := range old.Tools {
		names[t.Name] = true
	}
	for _, t := range cur.Tools {
		names[t.Name] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	add := func(c Change) {
		changes = append(changes, c)
		wider = wider || c.Wider
	}
	for _, n := range sorted {
		o, c := old.Tool(n), cur.Tool(n)
		switch {
		case o == nil:
			add(Change{Tool: n, What: fmt.Sprintf("new %s tool", c.Effect), Wider: c.Effect != "read"})
		case c == nil:
			add(Change{Tool: n, What: fmt.Sprintf("%s tool removed", o.Effect)})
		default:
			if o.Effect != c.Effect {
				add(Change{Tool: n, What: fmt.Sprintf("effect %s → %s", o.Effect, c.Effect), Wider: c.Effect.Rank() > o.Effect.Rank()})
			}
			if o.Remote != c.Remote {
				add(Change{Tool: n, What: fmt.Sprintf("the server's name for it %q → %q", cut(o.Remote, 60), cut(c.Remote, 60))})
			}
			if o.Description != c.Description {
				add(Change{Tool: n, What: "description changed"})
			}
			if o.Title != c.Title {
				add(Change{Tool: n, What: "title changed"})
			}
			if !reflect.DeepEqual(o.Input, c.Input) {
				add(Change{Tool: n, What: "input schema changed"})
			}
			if o.Destructive != c.Destructive || o.Idempotent != c.Idempotent || o.ClosedWorld != c.ClosedWorld {
				add(Change{Tool: n, What: "annotations changed", Wider: c.Destructive && !o.Destructive || o.ClosedWorld && !c.ClosedWorld})
			}
		}
	}
	return changes, wider, nil
}
