package interpreter_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memKV is a plugin store in memory that keeps what was written as JSON.
type memKV struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *memKV) Get(k string) (any, bool, error) { return nil, false, nil }
func (s *memKV) Set(k string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := steps.Encode(v, 64)
	if err != nil {
		return err
	}
	s.m[k] = string(b)
	return nil
}

func (s *memKV) dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for k, v := range s.m {
		b.WriteString(k + "=" + v + "\n")
	}
	return b.String()
}

// A step that rebuilt a credential (a server echoed it reversed, the step
// reversed it back) stores it: the store gets the redacted value, never
// the credential, in a value, a nested value, a number or the key.
func TestKVStoresNoCredential(t *testing.T) {
	const secret = "s3cr3t-session-4242"
	p := doc(t, "access:\n  abilities: [kv]\n", map[string]string{"t": tool(
		"  - jq: '\"" + reverse(secret) + "\" | explode | reverse | implode'\n    as: s\n" +
			"  - kv_set: {key: plain, value: '$s'}\n" +
			"  - kv_set: {key: nested, value: '{a: [{b: (\"x\" + $s)}], ($s): 1}'}\n" +
			"  - kv_set: {key: 'k-${ $s }', value: '1'}\n" +
			"  - kv_set: {key: num, value: '424242424242 | tostring | tonumber'}\n" +
			"  - return: '1'\n")})
	prog := compile(t, p)
	kv := &memKV{m: map[string]string{}}
	redact := func(s string) string {
		s = strings.ReplaceAll(s, secret, "[redacted]")
		return strings.ReplaceAll(s, "424242424242", "[redacted]")
	}
	_, err := run(t, prog, "t", nil, interpreter.WithKV(kv), interpreter.WithRedact(redact))
	require.NoError(t, err)
	got := kv.dump()
	assert.NotContains(t, got, secret)
	assert.NotContains(t, got, "424242424242")
	assert.Contains(t, got, `plain="[redacted]"`)
	assert.Contains(t, got, `x[redacted]`)
	assert.Contains(t, got, `k-[redacted]=1`)
}

// A result cut at the output limit is cut after redaction: the cut never
// leaves the first half of a credential behind.
func TestCutAfterRedaction(t *testing.T) {
	const secret = "s3cr3t-session-4242"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	for n := 60; n < 140; n++ {
		// The secret lies across the cut for some n.
		p := doc(t, "", map[string]string{"t": "description: A test tool.\neffect: read\nlimits: {output: 200}\nsteps:\n" +
			"  - return: '(\"x\" * " + strconv.Itoa(n) + ") + \"" + secret + "\" + (\"y\" * 400)'\n"})
		res, err := run(t, compile(t, p), "t", nil, interpreter.WithRedact(redact))
		require.NoError(t, err)
		require.True(t, res.Truncated)
		require.NotContains(t, string(res.JSON), secret[:6], "n=%d", n)
	}
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}
