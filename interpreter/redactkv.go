package interpreter

import (
	"github.com/pkuinfo/harness/steps"
)

// redactKV is the plugin's store seen through the run's redactor: a value
// a step rebuilt from a server's transformed echo of a credential is stored
// redacted, as the output is, never as the credential.
type redactKV struct {
	kv     steps.KV
	redact func(string) string
	lim    *Limits
}

// Keys and values are rid of terminal control characters first, as the
// store writes them: removing an invisible character between two halves
// after the redaction would join a credential the redactor did not see.
func (r redactKV) Get(key string) (any, bool, error) {
	return r.kv.Get(r.redact(steps.CleanString(key)))
}

func (r redactKV) Set(key string, v any) error {
	// A value whose text is over the store's limit fails as the store
	// would fail it, before it is cleaned and redacted: both copy every
	// part, and a value holding one part many times over would be copied
	// without bound.
	if r.lim != nil && steps.JSONOver(v, r.lim.Depth, r.lim.KVValueBytes) {
		return &steps.LimitError{Limit: "kvValueBytes", Max: int64(r.lim.KVValueBytes), What: "the stored value"}
	}
	return r.kv.Set(r.redact(steps.CleanString(key)), redactValue(steps.Clean(v), r.redact))
}

// redactValue returns v with every string, object key and number that
// holds a credential redacted (a number becomes the marker string).
func redactValue(v any, redact func(string) string) any {
	switch x := v.(type) {
	case nil, bool:
		return v
	case string:
		return redact(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e, redact)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[redact(k)] = redactValue(e, redact)
		}
		return out
	}
	b, err := steps.Encode(v, 1)
	if err != nil {
		return v
	}
	if s := string(b); redact(s) != s {
		return redact(s)
	}
	return v
}
