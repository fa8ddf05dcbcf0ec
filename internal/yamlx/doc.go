// Package yamlx parses YAML strictly into yaml.v3 nodes and walks them with
// positions. It refuses what could make a reviewer and the engine read
// different things: anchors, aliases, merge keys, explicit tags, a second
// document, duplicate keys (also when they differ only in case) and
// non-ASCII keys. It caps sizes, key counts and nesting before and while
// parsing, so a hostile document gets a clear error fast.
//
// # Declarations
//
// Every YAML surface declares its mappings once, as a Decl beside the code
// that uses them; the one decoder, the reference tables and the JSON Schema
// read the declaration, so nothing is kept in line by hand:
//
//	var retryDecl = &yamlx.Decl{Name: "retry", Fields: []yamlx.Field{
//		{Name: "attempts", Type: yamlx.Int{Min: 1, Max: 5}, Default: int64(2), Doc: "attempts in all"},
//		{Name: "backoff", Type: yamlx.Duration{Max: 10 * time.Second}, Default: 500 * time.Millisecond, Doc: "first wait"},
//		{Name: "wait", Type: yamlx.Bool{}, Deprecated: []string{"sleep"}, Doc: "an old key, renamed"},
//	}}
//
//	o, ok := doc.Decode(node, retryDecl, &l) // or ctx.Object(node, decl)
//	n := o.Int("attempts")                   // the value, or its default
//	if v, set := o.Get("backoff"); set { ... v.Node ... }
//
// The decoder reports, each at FILE:LINE:COL: unknown keys (with "did you
// mean", or "as is a key of a step, not of request" when an enclosing
// declaration has the key, or "query belongs under request" when an inner
// one does), wrong types, bounds, enums, patterns, missing required keys,
// and deprecated spellings (a warning naming the new one: Field.Deprecated
// for a plain rename, Field.Aliases for an old key whose value reads
// differently, e.g. seconds turned into milliseconds; Keyed and Short for a
// value an older release wrote in another shape). A bad value is reported
// once and neither defaulted nor called missing.
//
// Types: String (MinLen, MaxLen in characters, Pattern with a Hint or a
// Rule, Not), Int (Min, Max), Bool, Enum (Fold, Rule, Old spellings),
// Duration (Max), List, MapOf (in source order, []Entry), Object (a nested
// Decl, *Obj), Either (a scalar or a mapping), Any (JSON data), Later (the
// node, for the owner to decode once it is ready), Named (another name in
// the tables), SchemaPlus (a schema that says more than the decoding
// checks). A surface adds its own by implementing Type; Ctx.Env carries
// what its types need (a compiler).
//
// Gen turns declarations into JSON Schema (draft 2020-12) with title,
// description, enum and default; a Decl with Def becomes a shared "$defs"
// entry. Decl.Table renders the reference table for the docs.
package yamlx
