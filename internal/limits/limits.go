// Package limits declares the bounds of one tool call once: each limit's
// name (the key of a tool's `limits:` and of messages), what it bounds, its
// default and whether a tool may lower it. steps.Limits holds the values,
// a tool's `limits:` is decoded against Decl, the reference's table is
// Markdown, and the proxy takes its defaults from here. A leaf: it imports
// only yamlx.
package limits

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pkuinfo/harness/internal/yamlx"
)

// Unit says how a limit's value reads.
type Unit int

// Units of limits.
const (
	Count    Unit = iota // a number of things
	Bytes                // a size in bytes
	Duration             // a time.Duration, written as 10s
)

// Limit is one bound of a call.
type Limit struct {
	Name    string // "requests": the key in a tool's limits: and the NAME of messages
	Doc     string // what it bounds, for the reference
	Default int64  // the default (nanoseconds for a Duration)
	Unit    Unit
	Tool    bool // a tool's limits: may lower it
}

// The defaults the proxy shares with the steps.
const (
	DefaultRequestTimeout = 15 * time.Second
	DefaultResponseBytes  = 4 << 20
	DefaultRequests       = 50
	// WireRequests is the proxy's own ceiling on the requests one call
	// sends on the wire, redirect hops and retries included: twice the
	// requests limit.
	WireRequests = 2 * DefaultRequests
	// MaxAttempts is the most tries a request's retry may declare, the
	// first included: the steps' bound and the proxy's cap on retries.
	MaxAttempts = 5
)

// Table is every limit of a call, in the reference's order.
var Table = []Limit{
	{Name: "deadline", Default: int64(30 * time.Second), Unit: Duration, Tool: true, Doc: "the whole call, jq programs and CSS matching included"},
	{Name: "requestTimeout", Default: int64(DefaultRequestTimeout), Unit: Duration, Tool: true, Doc: "one request, its retries included"},
	{Name: "responseBytes", Default: DefaultResponseBytes, Unit: Bytes, Tool: true, Doc: "one response body, after decompression"},
	{Name: "requests", Default: DefaultRequests, Tool: true, Doc: "requests per call"},
	{Name: "steps", Default: 1000, Tool: true, Doc: "steps executed per call, nested ones included"},
	{Name: "iterations", Default: 200, Tool: true, Doc: "elements one `foreach` visits (checked before it starts)"},
	{Name: "pages", Default: 20, Tool: true, Doc: "pages one `paginate` fetches (its `maxPages` default and ceiling; reaching it stops without error)"},
	{Name: "items", Default: 2000, Tool: true, Doc: "items one `paginate` collects (stops without error); elements one `html`/`xml` select matches (and 16 times as many values in all its fields); `regex` matches"},
	{Name: "output", Default: 12000, Tool: true, Doc: "characters of the result's JSON before it is cut (below)"},
	{Name: "stringBytes", Default: 8 << 20, Unit: Bytes, Doc: "a string made by jq's `+`/`*` or by a template; the JSON text of a value a template, a `json:` body or a `paginate` cursor writes (measured before it is written)"},
	{Name: "depth", Default: 256, Doc: "nesting of any value: JSON bodies, jq values, the result"},
	{Name: "fieldBytes", Default: 64 << 10, Unit: Bytes, Doc: "one text extracted by `html`/`xml` (longer texts are cut)"},
	{Name: "htmlNodes", Default: 200000, Doc: "nodes of one parsed HTML or XML document"},
	{Name: "htmlDepth", Default: 256, Doc: "nesting of one parsed HTML or XML document"},
	{Name: "selectorCost", Default: 64, Doc: "parts of one CSS selector (`:has` weighs 8, `:not` 2); nested `:has`, and `~` inside `:has`, are refused"},
	{Name: "kvValueBytes", Default: 64 << 10, Unit: Bytes, Doc: "one stored value, as JSON"},
	{Name: "kvBytes", Default: 1 << 20, Unit: Bytes, Doc: "a plugin's whole store"},
	{Name: "kvKeys", Default: 1000, Doc: "keys in a plugin's store"},
	{Name: "kvWrites", Default: 50, Doc: "`kv_set` steps per call (each rewrites the store's file atomically, so a loop of them could write the whole store hundreds of times in one call)"},
	{Name: "heapBytes", Default: 1 << 30, Unit: Bytes, Doc: "the process heap, read every 10 ms while calls run and every 4096 operations of a call's jq programs: above it every running call stops (a program growing a value step by step, `[range(1e9)]`, cannot exhaust memory before the deadline, and passes the limit by at most what 4096 jq operations allocate)"},
}

// Get returns the limit named name.
func Get(name string) (Limit, bool) {
	for _, l := range Table {
		if l.Name == name {
			return l, true
		}
	}
	return Limit{}, false
}

// Text writes a value of the limit as the reference does: 30s, 4 MiB, 200.
func (l Limit) Text(v int64) string {
	switch l.Unit {
	case Duration:
		return time.Duration(v).String()
	case Bytes:
		for _, u := range []struct {
			size int64
			name string
		}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
			if v >= u.size && v%u.size == 0 {
				return strconv.FormatInt(v/u.size, 10) + " " + u.name
			}
		}
	}
	return strconv.FormatInt(v, 10)
}

// Decl declares a tool's `limits:` mapping: the limits a tool may lower,
// each a positive count or a duration. The host's value, the ceiling, is
// known only when compiling: the caller checks it.
var Decl = func() *yamlx.Decl {
	d := &yamlx.Decl{Name: "limits", Def: "limits", Doc: "Lower the host's limits for this tool (never raise them)."}
	for _, l := range Table {
		if !l.Tool {
			continue
		}
		var t yamlx.Type = yamlx.Int{Min: 1}
		if l.Unit == Duration {
			t = yamlx.Duration{}
		}
		d.Fields = append(d.Fields, yamlx.Field{Name: l.Name, Type: t, Doc: l.Doc + " (default " + l.Text(l.Default) + ")"})
	}
	return d
}()

// ToolNames lists the limits a tool may lower, in order.
func ToolNames() []string { return Decl.Keys() }

// Markdown is the reference's table of limits: name, default, whether a
// tool may lower it, what it bounds.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| limit | default | a tool may lower it | bounds |\n|---|---|---|---|\n")
	for _, l := range Table {
		tool := ""
		if l.Tool {
			tool = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", l.Name, l.Text(l.Default), tool, strings.ReplaceAll(l.Doc, "|", `\|`))
	}
	return b.String()
}
