// Package review shows what a plugin document declares and how an update
// changes it.
//
// NewSheet builds the review sheet of a parsed document from what it
// declares (never from what its steps seem to do): id, name, version, content
// hash, trust, the capabilities it requires, the campus services it may reach
// with their path prefixes, its public web origins, its host abilities and
// each tool with its effect and flags. A sheet renders as text for a person
// (WriteText) or as JSON with stable field names (the Sheet type's tags).
//
// Diff compares two versions' effective access after normalisation (case,
// default ports, trailing dots, "./" and duplicate entries) and lists every
// change, marking those that widen what the document may reach or do. An
// update whose diff is not Wider may be applied at once; a wider one waits for
// the user (the update package decides and applies updates).
//
// The package works on parsed documents only: it fetches nothing.
package review
