// Package plugintest is the author test format of plugin documents and its
// runner, the engine of `harness test`.
//
// A document carries its cases in tests/NAME.yaml files or in "yaml test
// NAME" blocks of PLUGIN.md (docs/plugin-format.md, "Tests", is the reference). A case names
// a tool, its input and the caller (actor, trust, taint, approval), the
// recorded exchanges the tool's requests meet (matched by service, method,
// path and query), the session values to sign with, and what must come out:
// an exact JSON result, jq assertions, a failure message, a status object or
// a permission refusal.
//
// The runner replays the exchanges without any network beyond this process:
// each campus service a case uses is served by a loopback httptest server,
// and the proxy's catalogue entry for it (the built-in one, or the one given
// in Options) is pointed at that server, so every request goes through the
// real proxy: signing, fixed headers and query, redirects, login detection,
// decoding and redaction are all exercised. The runner checks that each
// request carried the session the case gave (or none), that every recorded
// exchange was used, and that no session value appears in the result or the
// error.
package plugintest
