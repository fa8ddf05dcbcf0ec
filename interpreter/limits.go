package interpreter

import (
	"time"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/limits"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/steps"
	"go.yaml.in/yaml/v3"
)

// Limits are the bounds of one call; see steps.Limits for each.
type Limits = steps.Limits

// DefaultLimits are the limits when the host sets none.
func DefaultLimits() Limits { return steps.DefaultLimits() }

// toolLimits applies a tool's `limits:` mapping (declared by limits.Decl)
// to the host's limits: each value may only lower the host's.
func toolLimits(d *yamlx.Doc, n *yaml.Node, host Limits, l *diag.List) Limits {
	out := host
	if n == nil {
		return out
	}
	o, _ := d.Decode(n, limits.Decl, l)
	for _, f := range limits.Decl.Fields {
		v, ok := o.Get(f.Name)
		if !ok {
			continue
		}
		cur, _ := out.Get(f.Name)
		switch x := v.Value.(type) {
		case time.Duration:
			if int64(x) > cur {
				l.Errorf(d.NodePos(v.Node), "limits.%s %s is above the host's %s: a tool may only lower its limits", f.Name, x, time.Duration(cur))
				continue
			}
			out.Set(f.Name, int64(x))
		case int64:
			if x > cur {
				l.Errorf(d.NodePos(v.Node), "limits.%s must be between 1 and the host's %d: a tool may only lower its limits", f.Name, cur)
				continue
			}
			out.Set(f.Name, x)
		}
	}
	return out
}
