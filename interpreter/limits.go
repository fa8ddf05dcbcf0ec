package interpreter

import (
	"time"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/steps"
	"go.yaml.in/yaml/v3"
)

// Limits are the bounds of one call; see steps.Limits for each.
type Limits = steps.Limits

// DefaultLimits are the limits when the host sets none.
func DefaultLimits() Limits { return steps.DefaultLimits() }

// limitKeys are what a tool's `limits:` may lower, by name.
var limitKeys = []string{"deadline", "requestTimeout", "responseBytes", "requests", "steps", "iterations", "pages", "items", "output"}

// toolLimits applies a tool's `limits:` mapping to the host's limits: each
// value may only lower the host's.
func toolLimits(d *yamlx.Doc, n *yaml.Node, host Limits, l *diag.List) Limits {
	out := host
	if n == nil {
		return out
	}
	m, ok := d.Mapping(n, "limits", limitKeys, l)
	if !ok {
		return out
	}
	for _, f := range m.Fields {
		switch f.Key {
		case "deadline", "requestTimeout":
			s, ok := d.String(f.Value, f.Key, l)
			if !ok {
				continue
			}
			v, err := time.ParseDuration(s)
			if err != nil || v <= 0 {
				l.Errorf(d.NodePos(f.Value), "limits.%s: %q is not a duration such as 10s", f.Key, s)
				continue
			}
			dst := &out.Deadline
			if f.Key == "requestTimeout" {
				dst = &out.RequestTimeout
			}
			if v > *dst {
				l.Errorf(d.NodePos(f.Value), "limits.%s %s is above the host's %s: a tool may only lower its limits", f.Key, v, *dst)
				continue
			}
			*dst = v
		default:
			v, ok := d.Int(f.Value, "limits."+f.Key, l)
			if !ok {
				continue
			}
			var cur int64
			switch f.Key {
			case "responseBytes":
				cur = out.ResponseBytes
			case "requests":
				cur = int64(out.Requests)
			case "steps":
				cur = int64(out.Steps)
			case "iterations":
				cur = int64(out.Iterations)
			case "pages":
				cur = int64(out.Pages)
			case "items":
				cur = int64(out.Items)
			case "output":
				cur = int64(out.Output)
			}
			if v < 1 || v > cur {
				l.Errorf(d.NodePos(f.Value), "limits.%s must be between 1 and the host's %d: a tool may only lower its limits", f.Key, cur)
				continue
			}
			switch f.Key {
			case "responseBytes":
				out.ResponseBytes = v
			case "requests":
				out.Requests = int(v)
			case "steps":
				out.Steps = int(v)
			case "iterations":
				out.Iterations = int(v)
			case "pages":
				out.Pages = int(v)
			case "items":
				out.Items = int(v)
			case "output":
				out.Output = int(v)
			}
		}
	}
	return out
}
