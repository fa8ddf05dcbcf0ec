package interpreter

import (
	"bytes"
	"encoding/json"
	"strings"
	"unsafe"

	"github.com/pkuinfo/harness/steps"
)

// redactKV is the plugin's store seen through the run's redactor: a value
// a step rebuilt from a server's transformed echo of a credential is stored
// redacted, as the output is, never as the credential.
type redactKV struct {
	kv     steps.KV
	redact redactor
	lim    *Limits
}

// Keys and values are rid of terminal control characters first, as the
// store writes them: removing an invisible character between two halves
// after the redaction would join a credential the redactor did not see.
func (r redactKV) Get(key string) (any, bool, error) {
	return r.kv.Get(r.redact.Redact(steps.CleanString(key)))
}

func (r redactKV) Set(key string, v any) error {
	// A value whose text is over the store's limit fails as the store
	// would fail it, before it is cleaned and redacted: both copy every
	// part, and a value holding one part many times over would be copied
	// without bound.
	if r.lim != nil && steps.JSONOver(v, r.lim.Depth, r.lim.KVValueBytes) {
		return &steps.LimitError{Limit: "kvValueBytes", Max: int64(r.lim.KVValueBytes), What: "the stored value"}
	}
	return r.kv.Set(r.redact.Redact(steps.CleanString(key)), redactValue(steps.Clean(v), r.redact.Redact))
}

// redactValue returns v with every string, object key and number that
// holds a credential redacted (a number becomes the marker string).
func redactValue(v any, redact func(string) string) any {
	switch x := v.(type) {
	case nil, bool:
		return v
	case string:
		if r := redact(x); r != x {
			return r
		}
		return v
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

// redactResult is the JSON text of a result with every credential
// redacted, always valid JSON: strings and keys are redacted one by one, a
// number that holds a credential becomes the marker string. The text is
// then searched whole, for a credential that spans values (a key and its
// value, two elements: one that holds JSON's punctuation); should that find
// one, the result is the redacted text as one JSON string, rather than
// text that is no longer JSON.
//
// Most results hold no credential, and their text is searched once: when
// the text holds neither a backslash nor a '<', every string, key and
// number in it is written as its own bytes, no escape or markup the
// redactor reads can begin in one value and end in another, and so every
// credential the redactor finds in a value it finds in the whole text (a
// value's text is a part of it, with only JSON's quotes and punctuation
// around). A text in which the one search finds nothing is then the text
// redactResultEach returns; any other goes through redactResultEach.
func redactResult(v any, depth int, redact func(string) string) ([]byte, error) {
	b, err := steps.Encode(v, depth)
	if err != nil {
		return redactResultEach(v, depth, redact)
	}
	return redactEncoded(b, v, depth, redactFunc(redact))
}

// redactEncoded is redactResult of v whose text steps.Encode wrote as b:
// a caller that wrote it already does not write it twice.
func redactEncoded(b []byte, v any, depth int, r redactor) ([]byte, error) {
	if bytes.IndexByte(b, '\\') < 0 && bytes.IndexByte(b, '<') < 0 {
		s := unsafe.String(unsafe.SliceData(b), len(b))
		if r.Redact(s) == s {
			return b, nil
		}
	}
	return redactResultEach(v, depth, r.Redact)
}

// redactor is what a run redacts with: a proxy call (WithRoad) or a
// function (WithRedact, as redactFunc). An interface rather than a func,
// so that a host passing its proxy call makes no method value per run.
type redactor interface{ Redact(string) string }

// redactFunc is a redacting function as a redactor.
type redactFunc func(string) string

func (f redactFunc) Redact(s string) string { return f(s) }

// redactResultEach is redactResult value by value, then whole.
func redactResultEach(v any, depth int, redact func(string) string) ([]byte, error) {
	b, err := steps.Encode(redactValue(steps.Clean(v), redact), depth)
	if err != nil {
		return nil, err
	}
	s := string(b)
	r := redact(s)
	if r == s {
		return b, nil
	}
	if json.Valid([]byte(r)) {
		return []byte(r), nil
	}
	return steps.Encode(r, depth)
}

// previewWindow is how far before its " ..." a cut preview of jq's starts:
// jq's error messages show at most 30 bytes of a value's JSON, the cut
// marked " ..." and the value's closing quote or bracket.
const previewWindow = 30

// hidePreviews replaces every cut preview in an error message, "(" up to
// 30 bytes, " ...", a closing quote or bracket, ")", by "(…)". A value a
// step rebuilt from a server's echo of a credential in pieces holds the
// whole credential, which the redactor replaces; cut, its start is no
// credential, and redacting starts of credentials would tell a plugin
// which of its guesses was one. So every cut preview goes, whatever it
// holds: what is shown never depends on a credential.
func hidePreviews(msg string) string {
	for i := 0; i < len(msg); {
		j := strings.Index(msg[i:], " ...")
		if j < 0 {
			break
		}
		end := i + j
		from := max(i, end-previewWindow)
		open := strings.IndexByte(msg[from:end], '(')
		k := end + len(" ...")
		if k < len(msg) && strings.IndexByte(`"]}`, msg[k]) >= 0 {
			k++
		}
		if open < 0 || k >= len(msg) || msg[k] != ')' {
			i = end + len(" ...")
			continue
		}
		open += from
		msg = msg[:open+1] + "…" + msg[k:]
		i = open + 1 + len("…")
	}
	return msg
}
