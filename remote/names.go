package remote

import (
	"fmt"
	"strings"

	"github.com/pkuinfo/harness/manifest"
)

// Prefix starts every remote plugin's id; documents may not take it (the
// manifest's reserved ids).
const Prefix = manifest.RemotePrefix

// MaxIDLen is the longest plugin id, as for documents.
const MaxIDLen = 40

// MaxToolNameLen is how long a cleaned tool name may be.
const MaxToolNameLen = 40

// PluginID is "mcp-" and a slug of the server's name: lower-case ASCII
// letters and digits, every other run of characters one "-", trimmed, cut
// so the id fits MaxIDLen. A name with no letter or digit has no id.
func PluginID(serverName string) (string, error) {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(serverName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= MaxIDLen-len(Prefix) {
			break
		}
	}
	slug := strings.Trim(b.String(), "-")
	if len(slug) > MaxIDLen-len(Prefix) {
		slug = strings.TrimRight(slug[:MaxIDLen-len(Prefix)], "-")
	}
	if slug == "" {
		return "", fmt.Errorf("the server's name %q has no letter or digit to make a plugin id from", cut(serverName, 60))
	}
	return Prefix + slug, nil
}

// CleanToolName makes an MCP tool name a registry one: every character
// outside [a-zA-Z0-9_-] becomes "_", and the name is cut to MaxToolNameLen
// characters. An empty name stays empty (such a tool is left out).
func CleanToolName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= MaxToolNameLen {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// cut shortens untrusted text for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
