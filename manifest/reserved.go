package manifest

import (
	"fmt"
	"slices"
	"strings"
)

// RemotePrefix starts the ids of remote plugins (MCP servers added by URL,
// "mcp-<server>"): no document may take such an id.
const RemotePrefix = "mcp-"

// reservedIDs are the plugin ids of the host's own tools and names: the
// native settings tools (settings), the host's native tools (host), the
// engine itself (harness, the name harness mcp serves under). A document
// that took one would stand in for the host: its settings__set would
// receive what the agent meant for the user's settings.
var reservedIDs = []string{"harness", "host", "settings"}

// ReservedIDs lists the plugin ids no document may take (besides every id
// starting with RemotePrefix), sorted. The registry, lint and install use
// this one list.
func ReservedIDs() []string { return append([]string(nil), reservedIDs...) }

// Reserved reports why no document may take plugin id id ("reserved for
// ..."), or "" when one may: it is a native or core plugin's id, or it
// starts with RemotePrefix.
func Reserved(id string) string {
	if slices.Contains(reservedIDs, id) {
		return "reserved for the host's own tools"
	}
	if strings.HasPrefix(id, RemotePrefix) || id+"-" == RemotePrefix {
		return fmt.Sprintf("reserved for remote plugins (ids starting with %q)", RemotePrefix)
	}
	return ""
}

// CheckID reports why id cannot be a document's id: its form
// ([a-z][a-z0-9-]*), its length, or a reserved id; nil when it can.
func CheckID(id string) error {
	if !idRE.MatchString(id) || len(id) > MaxIDLen {
		return fmt.Errorf("id %q %s", id, idWord.Rule)
	}
	if why := Reserved(id); why != "" {
		return fmt.Errorf("id %q is %s", id, why)
	}
	return nil
}
