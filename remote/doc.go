// Package remote is the third kind of plugin: an MCP server reached over
// Streamable HTTP and added by URL. Adding one connects to the server, lists
// its tools and caches them as a Manifest; each call connects again, calls
// one tool and wraps what it answers as data.
//
// The rules are the plugin reference's: the plugin id is "mcp-" and a slug
// of the server name from the initialize answer; tool names are cleaned to
// [a-zA-Z0-9_-] and cut to 40 characters; a tool whose annotations say
// readOnlyHint: true is a read tool and every other tool is a write tool;
// results come from structuredContent, else from the text parsed as JSON,
// and every result is untrusted. A remote plugin has no campus session: its
// bearer token, if any, lives in the keystore under the plugin id and is sent
// to its own URL only.
//
// Everything a server sends is hostile until checked: names, descriptions
// and input schemas meet the same text and schema rules as a document's;
// answers are bounded in bytes and time, so a slow, huge or malformed server
// costs one call, never the process.
package remote
