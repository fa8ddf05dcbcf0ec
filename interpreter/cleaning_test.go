package interpreter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Stored values, keys and error messages lose their terminal control and
// invisible characters (bidi overrides, C0 controls): a step that puts
// one between two halves of a credential (a server echoed each half) must
// not have it joined after the redaction looked, in the store or in the
// step error's message.
func TestCleaningJoinsNoCredential(t *testing.T) {
	const secret = "s3cr3t-session-4242"
	half1, half2 := secret[:8], secret[8:]
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	for _, sep := range []string{`\u202e`, `\u0001`, `\u2066`} {
		joined := `"` + half1 + `" + "` + sep + `" + "` + half2 + `"`
		p := doc(t, "access:\n  abilities: [kv]\n", map[string]string{
			"store": tool("  - kv_set: {key: v, value: '" + joined + "'}\n" +
				"  - kv_set: {key: 'k-${ " + joined + " }', value: '1'}\n  - return: '1'\n"),
			"fail": tool("  - fail: '${ " + joined + " }'\n"),
			"jq":   tool("  - jq: '" + joined + " | error'\n"),
		})
		prog := compile(t, p)
		kv := &memKV{m: map[string]string{}}
		_, err := run(t, prog, "store", nil, interpreter.WithKV(kv), interpreter.WithRedact(redact))
		require.NoError(t, err)
		assert.NotContains(t, kv.dump(), secret, sep)
		assert.Contains(t, kv.dump(), "k-[redacted]=1", sep)
		for _, name := range []string{"fail", "jq"} {
			_, err = run(t, prog, name, nil, interpreter.WithRedact(redact))
			require.Error(t, err)
			assert.NotContains(t, err.Error(), secret, "%s %s", name, sep)
			assert.NotContains(t, steps.CleanString(err.Error()), secret, "%s %s", name, sep)
		}
	}
}

// The trace cleans a line before it redacts it, for the same reason.
func TestTraceCleansBeforeRedacting(t *testing.T) {
	const secret = "s3cr3t-session-4242"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	var b strings.Builder
	w := interpreter.TraceWriter(&b, redact)
	joined := secret[:8] + "\u202e" + secret[8:]
	w(steps.Event{Kind: "jq", Label: "1", Err: errors.New("jq error: " + joined)})
	w(steps.Event{Kind: "jq", Label: "2", Output: map[string]any{joined: joined + "\x07"}})
	assert.NotContains(t, b.String(), secret)
	assert.Equal(t, 3, strings.Count(b.String(), "[redacted]"), b.String())
}
