// Package netguard is the engine's one network-guard and host vocabulary,
// used by the proxy (web requests), the fetcher (PLUGIN.md URLs) and the
// command line (--resolve): which resolved addresses a public request may
// reach, which hosts and addresses are the campus's, the canonical form
// of a host name, loopback, and the --resolve mapping. It decides; it
// never dials or resolves.
package netguard
