// Package registry is the one place a host asks about tools: the installed
// and bundled plugin documents and the host's own native tools, their
// permission modes, the decision for each call, the envelope results reach
// the agent in, preferences, data sources and the model-facing catalogue.
//
// Tool ids are "<plugin>.<tool>"; the model sees "<plugin>__<tool>". Lookup
// accepts either, and legacy ids (old plugin ids, old tool names) resolve to
// the current ones.
//
// A call is checked in a fixed order, each refusal with its own Reason:
//
//  1. the tool exists, its document is available (its requires are met by
//     the host's capabilities) and enabled;
//  2. the input against the tool's JSON Schema (bad input is bad input
//     whatever the mode);
//  3. the actor: userOnly tools refuse the agent and the scheduler; the
//     user's own call is never questioned and runs whatever the mode; the
//     scheduler may call only read tools;
//  4. the effect's mode for the plugin (auto, ask, off), clamped to what the
//     document's trust allows (a community document's write, money and
//     public tools always ask): off refuses the agent and the scheduler;
//     ask asks the user through an Approver (the scheduler cannot ask and
//     is refused); alwaysAsk tools ask on every agent call;
//  5. taint: in a tainted turn the agent's write, money and public calls ask
//     even when their mode is auto;
//  6. the run, through the document's Runner, one at a time for serial tools.
//
// Results reach the agent in an Envelope the engine writes: the source
// (plugin, tool, trust), whether the data is untrusted, and the data nested
// under "data", so nothing a plugin returns can pose as the engine's fields.
// A community document's results are untrusted, as are those of a tool
// marked untrusted; an untrusted result taints the turn.
//
// docs/permissions.md is the reference for the rules and their bounds.
package registry
