// Package steps holds the step kinds of a tool: one file kind_<name>.go per
// kind with its [Spec], its decoder and its run function, registered in a
// [Registry]. It also holds what every kind shares: jq programs compiled once
// with their variables ([JQ]), `${ }` templates ([Template]), the [Frame] a
// step may touch while it runs, and the limits that bound a run.
//
// A step is a YAML mapping with exactly one kind key plus the shared
// modifiers `as` (bind the output to $NAME for later steps) and `if` (a jq
// condition; a skipped step passes `.` through and binds `as` to null).
// Decoding happens once, when a document is loaded: a bad program, selector
// or template is a diagnostic with its file position, never a run-time
// surprise.
//
// A kind declares its value once in its Spec: a scalar of a declared type
// (Scalar, with Short in words) or a mapping (Decl, an internal/yamlx
// declaration whose fields carry types such as [JQType], [TemplateType],
// [NameType], docs, defaults, enums and bounds). The one decoder in yamlx
// reads it for lint (unknown and misplaced keys, types, bounds, required
// keys), and the reference ([Markdown]), `harness explain` and the tool
// file's JSON Schema ([ToolSchema]) are generated from it. A new kind is its
// kind_<name>.go and testdata/<name>/*.txtar, touching no shared file.
package steps
