package manifest

import (
	"strings"
	"testing"
)

func TestCheckID(t *testing.T) {
	for id, want := range map[string]string{
		"canteen":               "",
		"a-1":                   "",
		"Canteen":               "must match",
		"1a":                    "must match",
		"":                      "must match",
		strings.Repeat("a", 41): "at most 40",
		"host":                  "reserved for the host's own tools",
		"mcp-x":                 "reserved for remote plugins",
		"mcp":                   "reserved for remote plugins",
	} {
		err := CheckID(id)
		if want == "" {
			if err != nil {
				t.Errorf("CheckID(%q) = %v, want nil", id, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckID(%q) = %v, want it to say %q", id, err, want)
		}
	}
}
