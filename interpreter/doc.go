// Package interpreter compiles a document's tools with the step registry
// and runs one tool: input validated against its schema, steps run in order
// within the limits, the result encoded and cut for the model.
//
// A compiled [Program] is immutable: every run gets its own state (frame,
// counters, deadline), so one Program may serve concurrent calls.
package interpreter
