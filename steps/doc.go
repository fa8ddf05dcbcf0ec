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
package steps
