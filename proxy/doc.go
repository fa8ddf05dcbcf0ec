// Package proxy is the credential-signing proxy: the only road from a plugin's
// steps to the network, and the security boundary of the engine.
//
// A [Proxy] holds the campus service [Catalogue], the user's sessions (a
// [Keystore]) and two separate transports: one for credentialed campus
// requests, one for public web requests behind an address guard. Each tool
// call gets a [Call] with its grants (the document's declared access), its own
// cookie jar for non-session cookies and its own counters.
//
// Campus requests name a service and a path; the proxy resolves the origin,
// refuses any path that could change it or leave the declared prefixes,
// attaches that service's session and nothing else, follows redirects only
// inside the origin, removes Set-Cookie and auth headers from the response,
// saves a refreshed session cookie, and replaces every credential value in
// headers, body, URL and errors with [Marker]. Web requests reach only
// declared origins, never a campus host, and never a loopback, private or
// otherwise special address unless the user mapped the host:port with
// Config.Resolve.
//
// docs/proxy.md describes the files, limits and rules.
package proxy
