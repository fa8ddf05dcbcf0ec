// Package yamlx parses YAML strictly into yaml.v3 nodes and walks them with
// positions. It refuses what could make a reviewer and the engine read
// different things: anchors, aliases, merge keys, explicit tags, a second
// document, duplicate keys (also when they differ only in case) and
// non-ASCII keys. It caps sizes, key counts and nesting before and while
// parsing, so a hostile document gets a clear error fast.
package yamlx
